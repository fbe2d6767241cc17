// `#/rules[/SECTION]`: the rules of Three Kingdoms chess (RULES.md) for
// players, in Chinese and English, with small diagrams drawn by the game's
// own board code. The destinations shown were listed by the engine (`sanguo
// moves --position …`) for the positions drawn; the page applies no rule.
// Refusal messages link here (refusal.js names the section).

import { Board } from './board.js';
import { getLang } from './i18n.js';
import { h, clear } from './ui.js';
import { yanyiRulesArticle } from './yanyi-rules.js';
import { anqiRulesArticle } from './anqi-rules.js';

/** The three kings away from file 5 (so nothing stands pinned), plus the pieces shown. */
const KINGS = [
  ['W41', 'W', 'K'],
  ['B41', 'B', 'K'],
  ['Y41', 'Y', 'K'],
];

/** Diagrams: pieces on the board, the piece whose moves are shown, its destinations. */
const DIAGRAMS = {
  king: { pieces: [], at: 'W41', dests: ['W51', 'W42'] },
  consort: { pieces: [['W51', 'W', 'F']], at: 'W51', dests: ['W61', 'W42', 'W52', 'W62'] },
  advisor: { pieces: [['W53', 'W', 'A']], at: 'W53', dests: ['W42', 'W62', 'W44', 'W64'] },
  prince: { pieces: [['W73', 'W', 'Z']], at: 'W73', dests: ['W62', 'W72', 'W82', 'W63', 'W83', 'W64', 'W74', 'W84'] },
  elephant: { pieces: [['W32', 'W', 'E'], ['W43', 'W', 'P']], at: 'W32', dests: ['W14'] },
  horse: { pieces: [['W34', 'W', 'N'], ['W44', 'W', 'P']], at: 'W34', dests: ['W22', 'W42', 'W13', 'W15', 'W26', 'W46'] },
  chariot: { pieces: [['W74', 'W', 'R']], at: 'W74', dests: ['W71', 'W72', 'W73', 'W14', 'W24', 'W34', 'W44', 'W54', 'W64', 'W84', 'W94', 'W75', 'W76', 'B31', 'B32', 'B33', 'B34', 'B35', 'B36', 'WM7', 'WQ7'] },
  cannon: { pieces: [['W74', 'W', 'C'], ['W76', 'W', 'P'], ['B33', 'B', 'R']], at: 'W74', dests: ['W71', 'W72', 'W73', 'W14', 'W24', 'W34', 'W44', 'W54', 'W64', 'W84', 'W94', 'W75', 'B33'] },
  soldier: { pieces: [['W36', 'W', 'P']], at: 'W36', dests: ['W26', 'W46', 'YM7'] },
};

const TEXT = {
  en: {
    title: 'The rules of Three Kingdoms chess (三国象棋)',
    intro: 'Three players — 魏 Wei (white, W), 蜀 Shu (black, B), 吴 Wu (yellow, Y) — on one board of 184 points. This page tells the rules as the server applies them; the full text is RULES.md.',
    sections: [
      ['board', 'The board and its regions', [
        'Each side has a rectangle of 9 files (1–9, left to right as that side sees it) and 6 ranks (1 outermost … 6 innermost): point W52 is Wei’s file 5, rank 2. Between the rectangles lie three fans of 7 points each, and the centre O. The coordinates button on the game page writes every point’s name on the board.',
      ]],
      ['regions', 'Regions', [
        'Palace 王宫: files 4–6 × ranks 2–4; rear palace 后宫: files 4–6 × ranks 1–2, with the dashed diagonals drawn in them. The king and consort stay in palace and rear palace, the advisor in the palace.',
        'No-soldier zone 非兵区: a side’s own ranks 1–5. A soldier never steps onto a point of its own zone; inside it (only at the start) it steps forward along its file.',
        'While three sides play, an elephant stays in its own rectangle; once one side is out it may also go to the opponent’s rectangle and the fans.',
      ]],
      ['turns', 'Turns and direction', [
        'Wei moves first; then counter-clockwise Wei → Shu → Wu (or clockwise, if the game was created so). Your downstream side 下家 moves right after you: you may always capture it. Your upstream side 上家 moves right before you.',
      ]],
      ['moves', 'How the pieces move', [
        'Captures are made the way a piece moves (the cannon excepted). No piece captures one of its own side.',
      ]],
      ['king', 'King 王 (魏 蜀 吴)', ['One step along a line, staying in palace and rear palace.']],
      ['consort', 'Consort 妃', ['One step along a line or along a drawn diagonal, staying in palace and rear palace.']],
      ['advisor', 'Advisor 仕 士 侍', ['One step along a drawn palace diagonal, staying in the palace.']],
      ['prince', 'Prince 子', ['One step along a line or across a cell, anywhere on the board (the centre included).']],
      ['elephant', 'Elephant 相 象 丞', ['One 田: two cells along a straight diagonal, its eye (the point between) empty — here W43 blocks the way to W54 (塞相眼).']],
      ['horse', 'Horse 马', ['One 日: one step along a line, then across a cell; the leg (the first point) must be empty — here W44 blocks two moves (蹩马腿).']],
      ['chariot', 'Chariot 车', ['Any number of points along a line through empty points, arcs included: file 7 runs on into Shu’s rectangle.']],
      ['cannon', 'Cannon 炮', ['Moves like a chariot; captures by jumping exactly one piece (of any side) and taking the first piece beyond it — here over W76 onto Shu’s chariot at B33.']],
      ['soldier', 'Soldier 兵 卒 丁', ['Outside its zone, one step along a line in any direction; in the zone only forward along its file. Once one side is out, one or two steps along one line (the first point empty and outside its zone).']],
      ['retaliation', '先击后攻: who may capture whom', [
        'While three sides play you may always capture your downstream side’s pieces, but your upstream side’s only in retaliation: right after it captured one of your pieces or checked you, for that one move. Without the right, a capture of the upstream side is not a move (the game tells you so when you try).',
        'With two sides left, both may capture each other freely.',
      ]],
      ['check', 'Check, 照面', [
        'Your king may never be left attacked by your upstream side (or by the only opponent), nor by your downstream side when your move captures or checks it (it could strike back), nor stay under a retaliation check. Two kings may never face each other along a clear line, through the centre O too (照面).',
      ]],
      ['sudden-death', 'Mate, stalemate and 猝死', [
        'A side with no legal move at its turn is out (将死 mate, 困毙 stalemate), its pieces leave the board. 猝死 sudden death: when a king is exposed to a side that may capture it, that side may take it. Right after a side left by resignation, time or a penalty, no king may be captured on that turn.',
      ]],
      ['phases', 'Phases', [
        'Phase 3: three sides play. Phase 2: after the first elimination, the last two play on; the one left wins.',
      ]],
      ['counters', 'Counters (§6)', [
        'Resigning or offering a draw is allowed after 15 completed rounds; earlier, the first request earns a warning and the second loses. Each side has 3 draw offers. With three sides, one accepting and one declining makes the offerer and the accepter lose.',
        'No capture and no check for 30 rounds (phase 3) or 20 rounds (phase 2) is a draw; so is 40 rounds of phase 2. Checking the same side 8 times in a row (6 in phase 2), or 25 times in all, loses; repeating the same checking position a 4th time loses. The game page shows these counters as they near their limits.',
        'A side that leaves (disconnected past its grace period) before 3 rounds aborts the game; later it counts as resignation. A side whose clock runs out is out as if it resigned.',
      ]],
    ],
  },
  zh: {
    title: '三国象棋规则',
    intro: '三方对弈：魏（白，W）、蜀（黑，B）、吴（黄，Y），共用一张184个点的棋盘。本页按服务器执行的规则讲解；完整条文见 RULES.md。',
    sections: [
      ['board', '棋盘与区域', ['每方有一个9路（1–9，从本方看自左向右）、6线（1为最外，6为最内）的长方形区域：W52 即魏方第5路第2线。三个区域之间各有一个7点的扇形区，中心为 O。对局页的“坐标”按钮可在棋盘上标出每个点的名称。']],
      ['regions', '区域', [
        '王宫：4–6路 × 2–4线；后宫：4–6路 × 1–2线，内有虚线斜线。帅（王）与妃只在王宫和后宫内，仕只在王宫内。',
        '非兵区：本方1–5线。兵不能走进本方非兵区的点；在区内（仅开局时）只能沿本路向前。',
        '三方对局时相只在本方区域；一方出局后，相还可到对方区域和扇形区。',
      ]],
      ['turns', '轮次与方向', ['魏先走，然后逆时针：魏 → 蜀 → 吴（建局时也可选顺时针）。紧接你之后走的一方是你的下家，你总可以吃它的子；紧接你之前走的是你的上家。']],
      ['moves', '棋子走法', ['除炮以外，棋子按走法吃子。不能吃本方的子。']],
      ['king', '帅（王：魏 蜀 吴）', ['沿线走一步，不出王宫与后宫。']],
      ['consort', '妃', ['沿线或沿虚线斜线走一步，不出王宫与后宫。']],
      ['advisor', '仕 士 侍', ['沿王宫虚线斜线走一步，不出王宫。']],
      ['prince', '子', ['沿线或斜穿一格走一步，可到棋盘任何地方（包括中心）。']],
      ['elephant', '相 象 丞', ['走“田”字：沿直斜线走两格，相眼（中间的点）须空——图中 W43 挡住了去 W54 的路（塞相眼）。']],
      ['horse', '马', ['走“日”字：先沿线一步，再斜穿一格；马腿（第一步的点）须空——图中 W44 挡住两步（蹩马腿）。']],
      ['chariot', '车', ['沿线走任意步，途经各点须空，弧线也算线：第7路一直通到蜀方区域。']],
      ['cannon', '炮', ['走法同车；吃子须恰好隔一个子（任何一方的），吃其后第一个子——图中隔 W76 吃蜀车 B33。']],
      ['soldier', '兵 卒 丁', ['在非兵区外沿线向任何方向走一步；区内只能沿本路向前。一方出局后，可沿一条线走一或两步（第一步的点须空且不在本方非兵区）。']],
      ['retaliation', '先击后攻：谁可以吃谁', ['三方对局时，你总可以吃下家的子；上家的子只能在反击时吃：上家刚吃了你的子或将了你，你的这一步可以吃它。没有反击权时吃上家的子不是合法着法（试走时对局页会说明）。', '只剩两方时双方可以互吃。']],
      ['check', '将军与照面', ['走后你的帅（王）不能被上家（两方时为对手）攻击；若这步吃了或将了下家，也不能被下家攻击（它可以反击）；被反击将军时必须应将。两个帅（王）不能在一条空线上对面，经过中心 O 也不行（照面）。']],
      ['sudden-death', '将死、困毙与猝死', ['轮到一方走棋而无合法着法，即出局（将死或困毙），其棋子离开棋盘。猝死：若某方的帅（王）暴露给可以吃它的一方，该方可以吃掉它。一方因认输、超时或判负出局后的这一轮，不能吃帅（王）。']],
      ['phases', '阶段', ['三方阶段：三方对弈。两方阶段：第一方出局后，剩下两方继续，最后留下的一方获胜。']],
      ['counters', '计数规则（§6）', [
        '完成15个回合后才可认输或提和；之前第一次请求警告，第二次判负。每方最多提和3次。三方时，一方同意一方拒绝，则提和方与同意方判负。',
        '三方阶段30回合（两方阶段20回合）无人吃子也无人将军为和；两方阶段满40回合也为和。连续将同一方8次（两方阶段6次），或累计25次，判负；同一将军局面第4次重复判负。对局页会在接近限度时提示这些计数。',
        '3个回合之前离开（断线超过宽限时间）则本局作废；之后离开按认输处理。超时按认输处理。',
      ]],
    ],
  },
};

/** A diagram drawn by the game's board code: its pieces, one piece picked up and where it may go. */
function diagram(key) {
  const d = DIAGRAMS[key];
  const host = h('div', { class: 'rule-diagram', 'data-diagram': key });
  const board = new Board(host, { fade: false });
  board.svg.removeAttribute('id');
  board.svg.classList.add('mini');
  const placement = new Map([...KINGS, ...d.pieces].map(([pt, side, piece]) => [pt, { side, piece }]));
  board.update({ placement, legal: new Map([[d.at, d.dests]]), interactive: false });
  board.select(d.at);
  return host;
}

export function mountRules(root, section) {
  clear(root);
  const text = TEXT[getLang() === 'zh' ? 'zh' : 'en'];
  const page = h(
    'article',
    { class: 'rules card', id: 'rules' },
    h('h1', {}, text.title),
    h('p', {}, text.intro),
    h('nav', { class: 'rules-toc' }, text.sections.map(([id, title]) => h('a', { href: `#/rules/${id}`, 'data-toc': id }, title))),
    ...text.sections.map(([id, title, paras]) =>
      h('section', { id: `rule-${id}`, 'data-rule': id }, h('h2', {}, title), ...paras.map((p) => h('p', {}, p)), DIAGRAMS[id] ? diagram(id) : null),
    ),
  );
  root.appendChild(page);
  // the second game system, 三国演弈棋, in its own article (sections `yanyi-…`)
  root.appendChild(yanyiRulesArticle());
  // the third, 三国暗棋, in its own article (sections `anqi-…`)
  root.appendChild(anqiRulesArticle());
  if (section) {
    const el = document.getElementById(`rule-${section}`);
    if (el) {
      el.classList.add('cited');
      el.scrollIntoView();
    }
  }
  return { destroy() {} };
}
