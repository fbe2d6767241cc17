// The rules page's section on 三国演弈棋 (RULES-YANYI), in Chinese and
// English, with diagrams drawn by the game's own board code on the 225-point
// board. The destinations shown are the rules text's own test vectors (§11),
// which the engine reproduces; the page applies no rule.

import { Board } from './board.js';
import { getLang } from './i18n.js';
import { h } from './ui.js';
import { parsePlacement } from './yanyi.js';

const HAN = 'YR@d7,YK@a9,YC@c9,YR@d9,YR@d11';
const INITIAL =
  'RR@e1,RN@f1,RE@g1,RA@h1,RK@i1,RA@j1,RE@k1,RN@l1,RR@m1,RC@f3,RC@l3,RP@e4,RP@g4,RP@i4,RP@k4,RP@m4,GP@n5,GR@q5,GC@o6,GN@q6,YR@d7,GP@n7,GE@q7,GA@q8,YK@a9,YC@c9,YR@d9,GP@n9,GK@q9,GA@q10,YR@d11,GP@n11,GE@q11,GC@o12,GN@q12,GP@n13,GR@q13,BP@e14,BP@g14,BP@i14,BP@k14,BP@m14,BC@f15,BC@l15,BR@e17,BN@f17,BE@g17,BA@h17,BK@i17,BA@j17,BE@k17,BN@l17,BR@m17';

/** Diagrams: a placement, the piece picked up and where it may go (RULES-YANYI §11). */
const DIAGRAMS = {
  'yanyi-board': { text: INITIAL },
  'yanyi-pieces': {
    text: `RK@i1,RN@e4,RN@e14,GK@q9,GN@n5,BP@i14,BK@i17,${HAN}`,
    at: 'e4',
    dests: ['f2', 'f6', 'g3', 'g5'],
  },
  'yanyi-soldier': {
    text: `RK@i1,RP@e4,RP@k5,RP@m5,RP@i6,GK@q9,BP@i14,BK@i17,${HAN}`,
    at: 'i6',
    dests: ['i7', 'h6', 'j6', 'i5'],
  },
  'yanyi-cannon': {
    text: `RK@i1,RC@f3,RC@l3,RP@i4,GK@q9,BP@i14,BK@i17,${HAN}`,
    at: 'f3',
    dests: ['e3', 'f1', 'f2', 'f4', 'f5', 'g3', 'h3', 'i3', 'j3', 'k3'],
  },
  'yanyi-alliance': {
    text: `RK@i1,RP@i4,GN@c7,GP@n9,GK@q9,BR@q12,BP@i14,BK@i17,${HAN}`,
    at: 'c7',
    dests: ['a8'],
  },
  // §11 scenario 1: 蜀's cannon e10-i10 checks 魏 over 魏's own i14 soldier; 魏 moves next, 吴 is skipped
  'yanyi-turns': {
    text: `RK@h1,RP@i4,GP@n9,GK@q9,RC@e10,BP@i14,BA@h17,BK@i17,BA@j17,${HAN}`,
    at: 'e10',
    dests: ['i10'],
  },
  // §11 scenarios 3 and 4: 吴's cannon behind 蜀's (m5-i5) mates 魏 and 吴 absorbs; in front (m12-i12), 蜀 absorbs
  'yanyi-absorb': {
    text: `RK@h1,GC@m5,RC@i9,GK@q9,GC@m12,BA@h17,BK@i17,BA@j17,${HAN}`,
    at: 'm5',
    dests: ['i5'],
  },
};

const TEXT = {
  en: {
    title: 'The rules of Three Kingdoms Yanyi chess (三国演弈棋)',
    intro:
      'The second game on this server: three players — 吴 Wu (green), 魏 Wei (black), 蜀 Shu (red) — and the yellow 汉 force, which belongs to nobody until an alliance is made or the emperor is killed, on a 17 × 17 board without its corners (225 points). The full text is RULES-YANYI.md. On the wire the seats are W = 吴, B = 魏, Y = 蜀.',
    sections: [
      ['yanyi-board', 'The board', [
        'Points are named file a–q (west to east) and rank 1–17 (south to north): 蜀’s king stands on i1, 魏’s on i17, 吴’s on q9, the emperor on a9. Each player has a camp of 9 × 5 points; its fourth line is the 防线 (the soldiers’ line), its fifth the 国境线 (the border, part of the camp). Palaces are 3 × 3 with their diagonals. Each player sees its own camp at the bottom.',
      ]],
      ['yanyi-turns', 'Who moves: 被将先走', [
        '吴 moves first, then 魏, then 蜀 (吴 → 魏 → 蜀 → 吴). But when a move leaves exactly one other player in check, that player moves next, out of order (被将先走): the game page says so (“魏 is in check and moves first”). When two players are in check at once, the order goes on as usual. The next player is always found from the last player that moved. Here 蜀’s cannon e10 → i10 checks 魏 over 魏’s own soldier: 魏 moves next and 吴 is skipped; if 魏 answers without giving check, 蜀 moves again.',
      ]],
      ['yanyi-pieces', 'The pieces', [
        'As in xiangqi, with these differences: the horse has no leg (nothing blocks it) but its whole 日 must lie on the board — beside the corner notches some jumps do not exist (here the horse on e4 has only four moves); the elephant moves one 田 with no eye to block, inside its own camp; the king and the advisor stay in their palace.',
        'A soldier steps forward or sideways; it may step back only once it is beyond its 国境线, and never behind it. On its 防线 it never retreats.',
        'On a player’s first move a cannon must stay inside its camp (the 国境线 included), capture or not.',
        'Kings are never captured: a player loses by 将死 (mate) or 困毙 (no legal move) at its own turn.',
      ]],
      ['yanyi-soldier', 'The soldier', ['Beyond its 国境线 the soldier on i6 moves in all four directions, back onto its 国境线 at most.']],
      ['yanyi-cannon', 'The first-move cannon', ['Before 蜀’s first move its cannon on f3 stays inside its camp: up to f5 (its 国境线) and along rank 3.']],
      ['yanyi-han', 'The 汉 force', [
        'The three yellow chariots and the cannon never move by themselves, cannot be taken, and block lines and screen cannons like any piece. The emperor (汉, a9) can be taken only by a horse (杀汉): the killer takes the 汉 chariots and cannon, and if three players are live the other two are allied at once.',
      ]],
      ['yanyi-alliance', 'Alliance (结盟)', [
        'Beside the emperor are three 结盟点: b9 is 吴’s, a8 魏’s, a10 蜀’s. A horse that lands on another live player’s point allies the two at once, whether the other wants it or not; the 汉 force then goes to the third player and the emperor leaves the board. Here 吴’s horse c7 → a8 allies 吴 with 魏, which also answers 魏’s check on 吴. Allies cannot capture each other and never check each other. There is only one alliance per game; it ends at the first elimination.',
      ]],
      ['yanyi-check', 'Check and facing (见面)', [
        'A move may not leave your own king in check by an enemy, nor make your king face 魏’s or 蜀’s king along an empty line. If 吴 makes 魏’s and 蜀’s kings face each other, both are eliminated and 吴 wins.',
      ]],
      ['yanyi-absorb', 'Elimination and 兵力收编', [
        'A player with no legal move at its turn is out. At the game’s first elimination its remaining pieces are absorbed — they change colour — by the player whose own pieces now attack its king, the last mover first (so a mate given over another’s cannon may hand the pieces to that other). Absorbed soldiers turn to their new owner’s front; elephants and advisors stay where they can move. At the second elimination the pieces leave the board and the last player wins. Here 蜀’s cannon i9 stands on 魏’s file: 吴’s cannon m5 → i5 (behind it) mates 魏 and 吴 absorbs, since 吴’s cannon attacks the king over 蜀’s; m12 → i12 (in front) mates too, but then 蜀 absorbs.',
      ]],
      ['yanyi-record', 'Resigning, draws and counters', [
        'A player may resign at any time; running out of time or leaving past the grace period counts the same; its pieces leave the board unabsorbed. Leaving before all three have moved aborts the game. A draw may be offered on your own turn; every other live player must accept.',
        'Checking the same player 8 moves in a row (6 with two players) loses; a position seen for the third time is a draw, unless exactly one player checked all the way (it loses). 150 plies (100 with two players) without a capture, an alliance or an elimination is a draw; so is a board where no one has a chariot, horse, cannon or soldier.',
      ]],
    ],
  },
  zh: {
    title: '三国演弈棋规则',
    intro: '本站的第二种棋：吴（绿）、魏（黑）、蜀（红）三方，加上不属于任何一方的黄色汉军，在去掉四角的17×17棋盘（225个点）上对弈。完整条文见 RULES-YANYI.md。协议中的座位：W = 吴，B = 魏，Y = 蜀。',
    sections: [
      ['yanyi-board', '棋盘', ['点名为路 a–q（自西向东）加线 1–17（自南向北）：蜀帅在 i1，魏帅在 i17，吴帅在 q9，汉帝在 a9。每方本国为 9×5 个点；第四线为防线（兵驻守处），第五线为国境线（属于本国）。九宫 3×3，有斜线。每方都看到本国在下方。']],
      ['yanyi-turns', '谁走棋：被将先走', ['吴先走，然后魏、蜀（吴 → 魏 → 蜀 → 吴）。若一步棋后恰有另一方被将，则由被将方先走（被将先走），对局页会说明（“魏被将，先走”）。两方同时被将时仍按原次序。下一个走棋者总是从最后走棋的一方算起。图中蜀炮 e10 → i10 隔魏兵将魏：魏先走，吴被跳过；魏应将后若未将军，仍由蜀走。']],
      ['yanyi-pieces', '棋子', [
        '同中国象棋，但：马无蹩马腿，但所走的“日”必须整个在棋盘上——缺角旁有的跳法不存在（图中 e4 的马只有四步）；相走“田”无塞象眼，不出本国；帅与士不出九宫。',
        '兵向前或横走；过了国境线才可后退，且不能退过国境线；在防线上不许后退。',
        '每方走第一步时，炮不能走出本国（含国境线），吃子也不行。',
        '帅不会被吃：轮到一方走而被将死或困毙，则出局。',
      ]],
      ['yanyi-soldier', '兵', ['过了国境线，i6 的兵可前后左右走，后退最多退到国境线。']],
      ['yanyi-cannon', '第一步的炮', ['蜀走第一步前，f3 的炮不出本国：最远到 f5（国境线），并可沿第三线横走。']],
      ['yanyi-han', '汉军', ['黄棋的三车一炮静止不动、不能被吃，像普通棋子一样挡路、作炮架。汉帝（a9）只能被马吃（杀汉）：杀汉者收编汉军的车炮，若三方都在，另外两方立即结盟。']],
      ['yanyi-alliance', '结盟', ['汉帝旁有三个结盟点：b9 属吴，a8 属魏，a10 属蜀。马跳到另一方的结盟点，两方立即结盟，无论对方是否愿意；汉军归第三方，汉帝离开棋盘。图中吴马 c7 → a8 与魏结盟，也解了魏对吴的将。盟军之间不能互相吃子，也无将军之说。每局只有一次结盟，第一次有人出局时联盟解体。']],
      ['yanyi-check', '将军与见面', ['走后自己的帅不能被敌方将军，也不能与魏或蜀的帅在空线上见面。若吴使魏、蜀两帅见面，两方同时出局，吴胜。']],
      ['yanyi-absorb', '出局与兵力收编', ['轮到一方走棋而无合法着法即出局。第一个出局者的残兵被收编（变色）：归能用自己的棋子吃其帅的一方，最后走棋者优先（所以借别人的炮将死，残兵可能归别人）。被收编的兵转向新主人的前方；相与士留在能走的地方。第二个出局者的棋子离开棋盘，最后一方获胜。图中蜀炮 i9 对着魏帅：吴炮 m5 → i5（在蜀炮之后）将死魏，吴收编；m12 → i12（在蜀炮之前）也将死魏，但由蜀收编。']],
      ['yanyi-record', '认输、和棋与计数', ['随时可以认输；超时或掉线超过宽限时间同样处理；其棋子离开棋盘，不被收编。三方都走过第一步之前离开，则对局作废。轮到自己时可以提和，其他各方都同意才成和。', '连续将同一方8次（两方时6次）判负；同一局面第三次出现为和，除非恰有一方一直在将军（该方判负）。150步（两方时100步）无吃子、结盟或出局为和；各方都没有车、马、炮、兵时也为和。']],
    ],
  },
};

function diagram(key) {
  const d = DIAGRAMS[key];
  const host = h('div', { class: 'rule-diagram', 'data-diagram': key });
  const board = new Board(host, { fade: false, variant: 'yanyi' });
  board.svg.removeAttribute('id');
  board.svg.classList.add('mini');
  board.setView('R');
  const legal = d.at ? new Map([[d.at, d.dests]]) : new Map();
  board.update({ placement: parsePlacement(d.text), legal, interactive: false });
  if (d.at) board.select(d.at);
  return host;
}

/** The 三国演弈棋 article of the rules page. */
export function yanyiRulesArticle() {
  const text = TEXT[getLang() === 'zh' ? 'zh' : 'en'];
  return h(
    'article',
    { class: 'rules card', id: 'rules-yanyi' },
    h('h1', {}, text.title),
    h('p', {}, text.intro),
    h('nav', { class: 'rules-toc' }, text.sections.map(([id, title]) => h('a', { href: `#/rules/${id}`, 'data-toc': id }, title))),
    ...text.sections.map(([id, title, paras]) =>
      h('section', { id: `rule-${id}`, 'data-rule': id }, h('h2', {}, title), ...paras.map((p) => h('p', {}, p)), DIAGRAMS[id] ? diagram(id) : null),
    ),
  );
}
