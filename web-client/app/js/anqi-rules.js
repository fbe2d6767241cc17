// The rules page's article on 三国暗棋 (shared/RULES-ANQI.md), in Chinese and
// English, with diagrams drawn by the game's own board code (AnqiBoard on the
// 9×5 board): the start blocks, flips and team claims, a cannon's moves and
// capture. The destinations shown are the rules text's own examples (§6, the
// example line of §11.3), which the engine reproduces; the page applies no rule.

import { getLang } from './i18n.js';
import { h } from './ui.js';
import { AnqiBoard, parseAnqiPosition } from './anqi.js';

/** Diagrams: a viewer-form position (§11.3), the piece picked up and where it may go. */
const DIAGRAMS = {
  // every piece face down on the four 4×2 corner blocks; the cross is empty
  'anqi-board': { text: '????1????/????1????/9/????1????/????1???? 1 --- 123 -/-/- 1 split1' },
  // RULES-ANQI §11.3's example line: +g2 (仕, seat 1 claims team 2), +i2 (seat 2 claims team 1,
  // seat 3 is given team 3), +f2 (车), +h2 (炮), i2xh2 (seat 2's 帅 takes the 炮)
  'anqi-flips': { text: '????1????/????1????/9/????1rAK1/????1???? 3 213 123 -/C/- 6 split1' },
  // §6's cannon example: 炮 on a1, a face-down screen on b1, an enemy 车 on f1: a1xf1
  'anqi-moves': { text: '9/9/9/9/C?3r3 1 213 123 -/-/- 10 split1', at: 'a1', legal: ['a1-a2', 'a1-a3', 'a1-a4', 'a1-a5', 'a1xf1'] },
};

const TEXT = {
  en: {
    title: 'The rules of Three Kingdoms hidden-piece chess (三国暗棋)',
    intro:
      'Three players share one xiangqi set of 32 pieces, shuffled face down on half a board. Nobody owns a colour: the first flips decide which of three teams each player holds. The full text is RULES-ANQI.md. On the wire the seats are W, B, Y = seats 1, 2, 3.',
    sections: [
      ['anqi-board', 'The board and the start', [
        'The board is 9 files (a–i) by 5 ranks (1–5) of points: 45 points, no palace, no river. The 32 pieces start face down on four 4 × 2 blocks in the corners; the cross of file e and rank 3 starts empty.',
        'Seat 1 acts first, then seats 2 and 3. Unless the game keeps the seats as taken, the server draws the seating at random, so nobody chooses to act first.',
      ]],
      ['anqi-flips', 'Flips and teams (认边)', [
        'An action is a flip (turn any face-down piece face up, where it stands), a move or a capture. There are three teams: 1 = 帅将兵卒 (both generals and the ten soldiers), 2 = the red 仕相伡㐷炮, 3 = the black 士象车马包 (split 2 regroups them). The colour of a character does not tell its team: the page draws each team with its own rim colour.',
        'A seat without a team can only flip. When it flips a piece of a team nobody holds yet, it holds that team; when two teams are claimed, the third seat is given the last one at once. Here seat 1 flipped 仕 on g2 (team 2), seat 2 flipped a piece of team 1, and seat 3 was given team 3.',
        'A piece of a team nobody holds — or of a seat that left — is unowned: nobody moves it and anyone may capture it while it is face up.',
      ]],
      ['anqi-moves', 'Moves and captures', [
        'Only face-up pieces of your own team move, and only face-up pieces of another team are captured; face-down pieces never move and are never captured. Any piece may capture any piece (no ranks).',
        'Generals and chariots slide along ranks and files; advisors step one point diagonally; elephants jump exactly two points diagonally (the middle point may be occupied); horses jump as in xiangqi with no leg to block; soldiers step one point in any of the four directions. There is no check: a general is an ordinary piece worth its points.',
        'A cannon moves like a chariot and captures over exactly one screen — any piece, face down included — the first piece beyond it. Here the cannon on a1 captures the 车 on f1 over the face-down piece on b1.',
      ]],
      ['anqi-modes', 'Modes, the end and scoring', [
        'Annihilation (全灭, the default): a seat whose team has no piece left on the board, face up or face down, is out; the last seat is first. Recover the army (收军): the first seat to capture as many pieces as its team had is first. First to N points (先得N分): the first seat whose captures are worth N points wins (帅将车 50, 马炮 35, 兵卒 20, 仕相 15).',
        'The game also ends by deadlock: 30 rounds (the game may set 10–100) without a flip, a capture or a seat stopping; no live seat with a legal action; or a scoring proposal (申请计分, three per seat) that every other live seat accepts. The live seats are then placed by the deadlock score: net score (得失分: the team\'s points left on the board plus its captures), points left (残存分) or pieces left (残存数). Seats that stopped come after, the last to stop first.',
        'A seat may resign at any time; running out of time or staying away past the grace period counts the same, and its pieces stay on the board, unowned. A seat that leaves before its first action aborts the game.',
      ]],
      ['anqi-options', 'Options', [
        'split2: the second team split (1 = soldiers, 2 = generals, advisors, elephants, 3 = chariots, horses, cannons). Assigned teams: the creator gives each seat its team and flips never claim. enhanced (强化将士象): the general moves as a queen, the advisor as a king, the elephant as a bishop, with higher values. double (二连): two actions a turn from turn 4; with fanchi (翻吃) the second may capture the piece the first revealed; with xqlegs horse legs and elephant eyes block as in xiangqi.',
      ]],
      ['anqi-fair', 'The fair deal: nobody chooses the layout', [
        'When the game is created the server draws a secret random number (its seed) and shows everyone its fingerprint (the SHA-256 hash) at once. Each player\'s browser then adds a random number of its own when it sits down; these are shown to everyone. When the table is full the layout and a salt are worked out from the server\'s seed and all three players\' numbers with HMAC-SHA-256, and the server announces a seal of the layout (the commitment) before the first flip.',
        'The server cannot choose the layout: it was bound to its seed by the fingerprint before the players\' numbers existed. A player cannot choose it either: nobody knows the server\'s seed until the end. A bot adds nothing (zeros), so the server cannot pick a bot\'s number after seeing the others.',
        'When the game ends the server publishes its seed, the layout and the salt. The replay page checks everything in your browser: the seed matches the fingerprint, the seeds give exactly this layout and salt, the seal matches, and every flip showed the piece the layout put there.',
      ]],
    ],
  },
  zh: {
    title: '三国暗棋规则',
    intro: '三人共用一副32枚的象棋，全部反扣洗乱摆在半张棋盘上。没有人事先拥有颜色：最初的翻子决定各人属于三队中的哪一队。完整条文见 RULES-ANQI.md。协议中的座位：W、B、Y 即 1、2、3 号位。',
    sections: [
      ['anqi-board', '棋盘与开局', ['棋盘为 9 路（a–i）× 5 线（1–5）共 45 个交叉点，没有九宫，没有河界。32 枚棋子反扣摆在四角的四个 4×2 方块上；e 路和第 3 线组成的十字开局为空。', '1 号位先行，然后 2、3 号位。除非对局设定按入座顺序，座位由服务器随机抽定，谁也不能选择先手。']],
      ['anqi-flips', '翻子与认边', ['每步可以翻子（把任意一枚暗子原地翻开）、走子或吃子。三队为：第1队 帅将兵卒，第2队 红方仕相伡㐷炮，第3队 黑方士象车马包（第二种分队另行组合）。字的颜色不代表队伍：棋盘用不同颜色的边框标出各队。', '尚未认边的一方只能翻子。翻到尚无人持有的队伍的棋子，便持有该队；两队被认领后，第三方立即分得最后一队。图中 1 号位翻出 g2 的仕（第2队），2 号位翻出第1队的子，3 号位分得第3队。', '无人持有的队伍（或已离局一方的队伍）的棋子为无主棋子：无人能走，翻开后任何一方都可以吃。']],
      ['anqi-moves', '走子与吃子', ['只能走本队的明子，只能吃他队的明子；暗子不能走，也不能被吃。吃子不分大小。', '将帅与车沿直线横竖走；士斜走一格；象斜走两格（可越过中间的子）；马走日，无拐马脚；兵卒前后左右各走一格。没有将军：将帅是普通棋子，只计其分。', '炮走法同车，吃子须隔恰好一枚炮架（任何棋子，暗子也可），吃炮架后的第一枚棋子。图中 a1 的炮隔着 b1 的暗子吃 f1 的车。']],
      ['anqi-modes', '玩法、终局与计分', ['全灭（默认）：一方的队伍在棋盘上再无棋子（明暗都算）即出局，最后留下的一方第一。收军：先吃够本队开局子数的一方第一。先得N分：吃子分先达到 N 分者胜（将帅车 50，马炮 35，兵卒 20，士相 15）。', '僵局也会结束对局：30 轮（可设 10–100）无翻子、吃子或出局；在局各方都无子可动；或一方申请计分（每方三次）而其余在局各方都同意。在局各方按僵局分排名：得失分（本队在盘棋子分加吃子分）、残存分或残存数。出局者排在后面，后出局者在前。', '随时可以认输；超时或掉线超过宽限时间同样处理，其棋子留在盘上成为无主棋子。第一步之前离开则对局作废。']],
      ['anqi-options', '选项', ['split2：第二种分队（1 = 兵卒，2 = 将帅士相，3 = 车马炮）。指定分队：由创建者给各座指定队伍，翻子不认边。强化将士象：将帅走法如后、士如王、象如象（国际象棋），分值提高。二连：从第 4 回合起每回合两步；加 fanchi（翻吃）时第二步可吃第一步翻出的子；加 xqlegs 时马有拐马脚、象有塞象眼。']],
      ['anqi-fair', '公平发牌：谁也不能选择排布', ['创建对局时，服务器抽取一个秘密随机数（服务器种子），并立即向所有人公布它的指纹（SHA-256 哈希）。每位玩家入座时，浏览器再加入一个自己的随机数，并公布给所有人。坐满后，由服务器种子和三位玩家的随机数用 HMAC-SHA-256 推导出排布和盐，服务器在第一次翻子前公布排布的封印（承诺）。', '服务器无法选择排布：在玩家的随机数出现之前，它已被指纹锁定在自己的种子上。玩家也无法选择：终局前没有人知道服务器种子。机器人不加入随机数（按全零），这样服务器就无法在看到其他人的随机数后替机器人挑选。', '终局时服务器公布它的种子、排布和盐。复盘页在你的浏览器里检查一切：种子与指纹相符，种子推导出的正是这个排布和盐，封印相符，每次翻开的都是排布放在那里的棋子。']],
    ],
  },
};

function diagram(key) {
  const d = DIAGRAMS[key];
  const host = h('div', { class: 'rule-diagram', 'data-diagram': key });
  const board = new AnqiBoard(host, { fade: false });
  board.svg.removeAttribute('id');
  board.svg.classList.add('mini');
  board.updateAnqi({ pos: parseAnqiPosition(d.text), legal: d.legal || [], interactive: false });
  if (d.at) board.select(d.at);
  return host;
}

/** The 三国暗棋 article of the rules page (sections `anqi-…`, `#/rules/anqi-fair` …). */
export function anqiRulesArticle() {
  const text = TEXT[getLang() === 'zh' ? 'zh' : 'en'];
  return h(
    'article',
    { class: 'rules card', id: 'rules-anqi' },
    h('h1', {}, text.title),
    h('p', {}, text.intro),
    h('nav', { class: 'rules-toc' }, text.sections.map(([id, title]) => h('a', { href: `#/rules/${id}`, 'data-toc': id }, title))),
    ...text.sections.map(([id, title, paras]) =>
      h('section', { id: `rule-${id}`, 'data-rule': id }, h('h2', {}, title), ...paras.map((p) => h('p', {}, p)), DIAGRAMS[id] ? diagram(id) : null),
    ),
  );
}
