// 三国演弈棋 (variant `yanyi`) in the browser: what the play screen needs
// beyond the board the server describes — the seats' kingdoms, the four
// owners' colours (吴 green, 魏 black, 蜀 red, 汉 yellow), the position's
// placement field (RULES-YANYI §10.3), the state of play the server's
// `status.yanyi` block carries (who moves and why: 被将先走; the alliance; the
// 汉 force; absorptions; first moves; the §9 counters), its record lines
// (`noted` events) and its refusals. No rule is applied here.
//
// Seats stay W, B, Y on the wire: W = 吴 (colour G, moves first), B = 魏 (B),
// Y = 蜀 (R). Position texts speak colours: G, B, R and Y = the 汉 force.

import { getLang } from './i18n.js';
import { boardOf } from './variants.js';

/** Seat → colour letter of the position text. */
export const SEAT_COLOUR = { W: 'G', B: 'B', Y: 'R' };
/** Colour letter → seat (汉, `Y`, has none). */
export const COLOUR_SEAT = { G: 'W', B: 'B', R: 'Y' };

const KINGDOM = {
  G: { zh: '吴', en: 'Wu', colour: { zh: '绿方', en: 'green' } },
  B: { zh: '魏', en: 'Wei', colour: { zh: '黑方', en: 'black' } },
  R: { zh: '蜀', en: 'Shu', colour: { zh: '红方', en: 'red' } },
  Y: { zh: '汉', en: 'Han', colour: { zh: '黄方', en: 'yellow' } },
};

const lang = () => (getLang() === 'zh' ? 'zh' : 'en');

/** A colour's kingdom: `吴` / `Wu`; long: `吴（绿方）` / `Wu 吴 (green)`. */
export function kingdomName(colour, long = false) {
  const k = KINGDOM[colour];
  if (!k) return colour || '';
  if (!long) return k[lang()];
  return lang() === 'zh' ? `${k.zh}（${k.colour.zh}）` : `${k.en} ${k.zh} (${k.colour.en})`;
}

/** A seat's name (W, B, Y on the wire), as i18n's sideName does for 三国象棋. */
export function seatName(seat, short = false) {
  return kingdomName(SEAT_COLOUR[seat] || seat, !short);
}

/** The placement field of a position text: Map point → {side: colour letter, piece}. */
export function parsePlacement(positionText, held = {}) {
  const map = new Map();
  const field = (positionText || '').trim().split(/\s+/)[0];
  if (!field) return map;
  for (const tok of field.split(',')) {
    const m = /^([GBRY])([KAENRCP])@([a-q]\d{1,2})$/.exec(tok.trim());
    if (!m) continue;
    const p = { side: m[1], piece: m[2] };
    // a piece held by another owner than its first (an activated 汉 piece, an absorbed one)
    if (held[m[3]] && held[m[3]] !== m[1]) p.origin = held[m[3]];
    map.set(m[3], p);
  }
  return map;
}

/** A piece's character, from the server's board description. */
export function pieceChar(p) {
  const set = boardOf('yanyi').pieces[p.side] || {};
  return set[p.piece] || p.piece;
}

const TEXT = {
  en: {
    turnCheck: '{side} is in check and moves first (被将先走).',
    turnCheckMe: 'You are in check and move first (被将先走).',
    turnCycle: '{side} moves: the next in the order 吴 → 魏 → 蜀.',
    turnCycleTwoChecked: '{side} moves: two players are in check, so the order 吴 → 魏 → 蜀 goes on.',
    turnOther: '{side} moves: two players are left, they take turns.',
    skipped: '{side} is skipped this time.',
    alliance: 'Alliance: {a} and {b} (结盟) — they may not capture each other.',
    noAlliance: 'No alliance yet: a horse on another player’s 结盟点 (the points beside the emperor) allies the two at once.',
    hanStatic: 'The 汉 force (yellow) stands still: nobody may take it; only a horse may take the emperor.',
    hanAllied: 'The 汉 force belongs to {holder} (the player left out of the alliance).',
    hanKilled: 'The emperor was killed by {holder}, who took the 汉 force.',
    absorbed: '{by} absorbed the pieces of {absorbed} (兵力收编).',
    firstMove: 'First move pending ({sides}): a cannon must stay inside its camp.',
    noProgress: 'No capture, alliance or elimination for {n} plies (draw at {max}).',
    checks: '{by} has checked {on} {n} moves in a row (the {max}th loses).',
    noted_alliance: '{a} and {b} are allied (结盟).',
    noted_han: 'The 汉 force now fights for {side}.',
    noted_emperor: '{side} killed the emperor (杀汉) and takes the 汉 force.',
    noted_absorbed: '{by} absorbs the pieces of {absorbed} (兵力收编).',
    held: 'held by {holder}, once {origin}’s',
    seatOut: 'out',
    rule: 'the rule',
    refusals: {
      game_over: 'The game is over.',
      not_your_turn: 'Not your turn: {turn} is to move (被将先走 may give the move out of order).',
      not_started: 'The game has not started: it waits for players.',
      paused: 'The arbiter paused the clocks: no move until they run again.',
      no_piece: 'There is no piece on {point}.',
      han_never_moves: 'The static 汉 force never moves by itself: that {piece} belongs to nobody.',
      not_your_piece: 'Not your piece: that {piece} belongs to {owner}.',
      not_this_pieces_move: 'A {piece} does not move that way.',
      king_outside_palace: 'A king may not leave its palace (九宫).',
      advisor_outside_palace: 'An advisor stays on the diagonals of its palace.',
      elephant_outside_camp: 'An elephant may not leave its camp (本国); nothing blocks its eye, though.',
      horse_off_board: 'The horse’s 日 must lie wholly on the board, and a corner notch cuts it (no leg blocks a horse, but the board does).',
      soldier_no_retreat_4: 'A soldier on its 防线 moves forward or sideways, never back.',
      soldier_no_retreat_5: 'A soldier on its 国境线 may not retreat: it retreats at most onto its 国境线.',
      soldier_no_retreat: 'A soldier may not retreat behind its 国境线.',
      path_blocked: 'Blocked: a piece on {point} is in the way.',
      cannon_screen: 'A cannon captures by jumping exactly one piece; {count} stand between.',
      cannon_first_move: 'On a player’s first move a cannon must stay inside its camp (the 国境线 included).',
      own_piece: 'You cannot capture your own {piece}.',
      ally_piece: 'Allies may not capture each other: that {piece} belongs to your ally {ally}.',
      han_cannot_be_taken: 'The static 汉 {piece} cannot be taken.',
      emperor_only_by_horse: 'The emperor 汉 can be taken only by a horse.',
      king_never_captured: 'Kings are never captured: {owner} loses by 将死 or 困毙 at its own turn.',
      king_attacked: 'Your king would stand in check by {by}.',
      kings_face: 'Your king would face {side}’s king (见面).',
      other: 'This move is not legal here.',
    },
  },
  zh: {
    turnCheck: '{side}被将，先走（被将先走）。',
    turnCheckMe: '你被将军，先走（被将先走）。',
    turnCycle: '{side}走：按吴 → 魏 → 蜀 的次序。',
    turnCycleTwoChecked: '{side}走：两方同时被将，仍按吴 → 魏 → 蜀 的次序。',
    turnOther: '{side}走：只剩两方，轮流走棋。',
    skipped: '{side}这次被跳过。',
    alliance: '结盟：{a}与{b}——盟军之间不能互相吃子。',
    noAlliance: '尚未结盟：马跳到另一方的结盟点（汉帝旁的点），两方立即结盟。',
    hanStatic: '汉军（黄）静止：不能被杀，汉帝只能被马吃。',
    hanAllied: '汉军归{holder}（未结盟方）。',
    hanKilled: '{holder}杀汉，收编了汉军。',
    absorbed: '{by}收编了{absorbed}的残兵。',
    firstMove: '尚未走第一步（{sides}）：炮不能走出国境线。',
    noProgress: '已{n}步无吃子、结盟或出局（{max}步为和）。',
    checks: '{by}已连续将{on} {n}次（第{max}次判负）。',
    noted_alliance: '{a}与{b}结盟。',
    noted_han: '汉军归{side}。',
    noted_emperor: '{side}杀汉，收编汉军。',
    noted_absorbed: '{by}收编{absorbed}的残兵。',
    held: '原属{origin}，现归{holder}',
    seatOut: '已出局',
    rule: '规则',
    refusals: {
      game_over: '对局已结束。',
      not_your_turn: '还没轮到你：现在是{turn}走棋（被将先走可能打乱次序）。',
      not_started: '对局还没开始：等待棋手入座。',
      paused: '裁判暂停了计时：恢复之前不能走棋。',
      no_piece: '{point} 上没有棋子。',
      han_never_moves: '静止的汉军不会自己走：这个{piece}不属于任何一方。',
      not_your_piece: '这不是你的棋子：这个{piece}属于{owner}。',
      not_this_pieces_move: '{piece}不能这样走。',
      king_outside_palace: '帅不能走出九宫。',
      advisor_outside_palace: '士只在九宫斜线上走。',
      elephant_outside_camp: '相不能走出本国（无塞象眼）。',
      horse_off_board: '马走的“日”必须整个在棋盘上，缺角处不行（无蹩马腿）。',
      soldier_no_retreat_4: '兵在防线上可以横走，但不许后退。',
      soldier_no_retreat_5: '兵在国境线上不能后退：后退最多退到本国国境线。',
      soldier_no_retreat: '兵后退不能退过本国国境线。',
      path_blocked: '被挡住：{point} 上有子。',
      cannon_screen: '炮吃子必须恰好隔一个子；中间有 {count} 个。',
      cannon_first_move: '开局第一步，炮不能走出国境线。',
      own_piece: '不能吃自己的{piece}。',
      ally_piece: '结盟后盟军不能互相吃子：这个{piece}属于盟友{ally}。',
      han_cannot_be_taken: '静止的汉军{piece}不能被吃。',
      emperor_only_by_horse: '汉帝只能被马吃。',
      king_never_captured: '帅不会被吃：{owner}只能在轮到它时被将死或困毙。',
      king_attacked: '走后你的帅会被{by}将军。',
      kings_face: '见面：走后你的帅会与{side}的帅对面。',
      other: '这步棋在此处不合规则。',
    },
  },
};

const ROLE = {
  en: { K: 'king', A: 'advisor', E: 'elephant', N: 'horse', R: 'chariot', C: 'cannon', P: 'soldier' },
  zh: { K: '帅', A: '士', E: '相', N: '马', R: '车', C: '炮', P: '兵' },
};

function fill(template, params) {
  return template.replace(/\{(\w+)\}/g, (_, k) => params[k] ?? `{${k}}`);
}

function tx(key, params = {}) {
  return fill(TEXT[lang()][key] || TEXT.en[key] || key, params);
}

/** A piece code of the wire (`GC`, `YR`: colour and role) in words. */
function pieceWords(code) {
  if (!code || code.length < 2) return code || '';
  const [colour, role] = [code[0], code[1]];
  if (colour === 'Y' && role === 'K') return lang() === 'zh' ? '汉帝' : 'emperor 汉';
  if (lang() === 'zh') return `${kingdomName(colour)}${pieceChar({ side: colour, piece: role })}`;
  return `${kingdomName(colour)} ${ROLE.en[role] || role}`;
}

/** Sections of the rules page each refusal cites. */
const RULE_OF = {
  not_your_turn: 'yanyi-turns',
  han_never_moves: 'yanyi-han',
  han_cannot_be_taken: 'yanyi-han',
  emperor_only_by_horse: 'yanyi-han',
  ally_piece: 'yanyi-alliance',
  not_this_pieces_move: 'yanyi-pieces',
  king_outside_palace: 'yanyi-pieces',
  advisor_outside_palace: 'yanyi-pieces',
  elephant_outside_camp: 'yanyi-pieces',
  horse_off_board: 'yanyi-pieces',
  soldier_no_retreat: 'yanyi-pieces',
  path_blocked: 'yanyi-pieces',
  cannon_screen: 'yanyi-pieces',
  cannon_first_move: 'yanyi-pieces',
  king_never_captured: 'yanyi-check',
  king_attacked: 'yanyi-check',
  kings_face: 'yanyi-check',
};

/** A refusal `{code, params}` in this game's words: `{text, rule}`. */
export function refusalText(refusal) {
  const params = { ...(refusal.params || {}) };
  for (const k of ['turn', 'owner', 'ally', 'side']) if (params[k]) params[k] = seatName(params[k], true);
  if (params.by) params.by = params.by.split(',').map((s) => seatName(s, true)).join(lang() === 'zh' ? '、' : ' and ');
  if (params.piece) params.piece = pieceWords(params.piece);
  const dict = TEXT[lang()].refusals;
  let key = refusal.code;
  if (key === 'soldier_no_retreat' && dict[`soldier_no_retreat_${params.depth}`]) key = `soldier_no_retreat_${params.depth}`;
  return { text: fill(dict[key] || dict.other, params), rule: RULE_OF[refusal.code] || null };
}

/** The link text of a rules citation. */
export function ruleLinkText() {
  return tx('rule');
}

/** Who moves and why (被将先走), one sentence; `me` is the viewer's seat. */
export function turnText(status, me) {
  const y = status.yanyi;
  if (!y) return null;
  const side = seatName(status.turn, true);
  if (y.turn_reason === 'check') return status.turn === me ? tx('turnCheckMe') : tx('turnCheck', { side });
  if (y.turn_reason === 'other') return tx('turnOther', { side });
  if (y.turn_reason === 'cycle') {
    const two = (status.in_check || []).filter((s) => s !== y.last_mover).length >= 2;
    return two ? tx('turnCycleTwoChecked', { side }) : tx('turnCycle', { side });
  }
  return null;
}

/**
 * The notes of the state of play: [{id, cls, text}] — who moves and why, the
 * alliance, the 汉 force, absorptions, pending first moves, the counters near
 * their limits.
 */
export function statusNotes(status, me) {
  const y = status.yanyi;
  if (!y) return [];
  const out = [];
  const turn = turnText(status, me);
  if (turn) out.push({ id: 'turn-reason', cls: y.turn_reason === 'check' ? 'bad' : '', text: turn, reason: y.turn_reason });
  if (y.turn_reason === 'check' && y.last_mover) {
    // the player the cycle would have given the move to
    const order = ['W', 'B', 'Y'];
    let n = y.last_mover;
    for (let i = 0; i < 3; i++) {
      n = order[(order.indexOf(n) + 1) % 3];
      if (status.live.includes(n)) break;
    }
    if (n !== status.turn && n !== y.last_mover) out.push({ id: 'skipped', cls: 'warn', text: tx('skipped', { side: seatName(n, true) }) });
  }
  if (y.alliance) out.push({ id: 'alliance', cls: 'good', text: tx('alliance', { a: seatName(y.alliance[0], true), b: seatName(y.alliance[1], true) }) });
  const han = y.han || { state: 'static' };
  if (han.state === 'static') {
    out.push({ id: 'han', cls: '', text: tx('hanStatic') });
    if (!y.alliance && status.live.length === 3) out.push({ id: 'no-alliance', cls: '', text: tx('noAlliance') });
  } else if (han.state === 'allied_to') out.push({ id: 'han', cls: 'warn', text: tx('hanAllied', { holder: seatName(han.holder, true) }) });
  else if (han.state === 'killed') out.push({ id: 'han', cls: 'warn', text: tx('hanKilled', { holder: seatName(han.holder, true) }) });
  for (const a of y.absorptions || []) out.push({ id: 'absorbed', cls: 'warn', text: tx('absorbed', { by: seatName(a.by, true), absorbed: seatName(a.absorbed, true) }) });
  if ((y.first_move_pending || []).length) out.push({ id: 'first-move', cls: '', text: tx('firstMove', { sides: y.first_move_pending.map((s) => seatName(s, true)).join(lang() === 'zh' ? '、' : ', ') }) });
  if (y.no_progress_limit && y.plies_without_progress >= y.no_progress_limit * 0.6) {
    out.push({ id: 'no-progress', cls: 'warn counter', text: tx('noProgress', { n: y.plies_without_progress, max: y.no_progress_limit }) });
  }
  const seats = ['W', 'B', 'Y'];
  (y.consecutive_checks || []).forEach((row, i) =>
    row.forEach((n, j) => {
      if (i !== j && y.perpetual_check_limit && n >= Math.max(2, y.perpetual_check_limit - 3)) {
        out.push({ id: 'checks', cls: 'warn counter', text: tx('checks', { by: seatName(seats[i], true), on: seatName(seats[j], true), n, max: y.perpetual_check_limit }) });
      }
    }),
  );
  return out;
}

/** A `noted` record line (protocol/README.md, 三国演弈棋) in words, or null. */
export function notedText(text) {
  const [kind, ...args] = String(text || '').split(' ');
  switch (kind) {
    case 'alliance':
      return tx('noted_alliance', { a: seatName(args[0], true), b: seatName(args[1], true) });
    case 'han':
      return tx('noted_han', { side: seatName(args[0], true) });
    case 'emperor_killed':
      return tx('noted_emperor', { side: seatName(args[0], true) });
    case 'absorbed':
      return tx('noted_absorbed', { absorbed: seatName(args[0], true), by: seatName(args[1], true) });
    default:
      return null;
  }
}

/** The title of a piece held by another owner (a tooltip on the board). */
export function heldTitle(p) {
  return tx('held', { holder: kingdomName(p.side), origin: kingdomName(p.origin) });
}

/**
 * A record stepped through as live showed it (the replay page): for each
 * position (0 = the start, i = after move i) its placement — pieces held by
 * another owner carry `origin`, as the live board draws them — and a
 * status-like object whose `yanyi` block has the alliance, the 汉 force's
 * state and the absorptions, and whose `live` has the seats still in.
 * Everything comes from the record: its moves, its `notes` (alliance, han,
 * emperor_killed, absorbed: protocol/README.md) and the departures (the
 * result's eliminations, or a live game's `departures`). No rule is applied:
 * an alliance's `han Z` note hands the yellow chariots and cannon to Z and
 * the emperor leaves (RULES-YANYI §6.2), 杀汉's note hands them to the
 * killer, an absorption recolours the absorbed seat's pieces but its king,
 * any other departure removes the seat's pieces (and the 汉 pieces it held),
 * and the first elimination ends the alliance (§6.5).
 */
export function replayTimeline(rec, departures) {
  const notesAt = new Map();
  for (const n of rec.notes || []) {
    if (!notesAt.has(n.ply)) notesAt.set(n.ply, []);
    notesAt.get(n.ply).push(n.text);
  }
  let placement = parsePlacement(rec.initial_position);
  let y = { alliance: null, han: { state: 'static' }, absorptions: [] };
  let live = ['W', 'B', 'Y'].filter((s) => [...placement.values()].some((p) => p.side === SEAT_COLOUR[s] && p.piece === 'K'));
  const out = [];
  const push = (i) => {
    const m = i > 0 ? rec.moves[i - 1] : null;
    out.push({ placement, status: { turn: null, live: [...live], in_check: [], yanyi: { ...y, absorptions: [...y.absorptions] } }, move: m });
  };
  const handTo = (colour) => {
    for (const [pt, q] of [...placement]) {
      if (q.side !== 'Y') continue;
      if (q.piece === 'K') placement.delete(pt);
      else placement.set(pt, { ...q, side: colour, origin: q.origin || 'Y' });
    }
  };
  const after = (ply) => {
    for (const text of notesAt.get(ply) || []) {
      const [kind, a, b] = text.split(' ');
      if (kind === 'alliance') y.alliance = [a, b];
      else if (kind === 'han') {
        handTo(SEAT_COLOUR[a]);
        y.han = { state: 'allied_to', holder: a };
      } else if (kind === 'emperor_killed') {
        handTo(SEAT_COLOUR[a]);
        y.han = { state: 'killed', holder: a };
      } else if (kind === 'absorbed') y.absorptions.push({ absorbed: a, by: b });
    }
    for (const d of departures || []) {
      if (d.ply !== ply || !live.includes(d.side)) continue;
      const gone = SEAT_COLOUR[d.side];
      for (const [pt, q] of [...placement]) {
        if (q.side !== gone) continue;
        if (d.absorbed_by && q.piece !== 'K') placement.set(pt, { ...q, side: SEAT_COLOUR[d.absorbed_by], origin: q.origin || q.side });
        else placement.delete(pt);
      }
      live = live.filter((s) => s !== d.side);
      y.alliance = null;
    }
  };
  // departures before any move (an abort, a resignation at the start)
  after(0);
  push(0);
  rec.moves.forEach((m, i) => {
    placement = new Map(placement);
    const [from, to] = m.mv.split('-');
    const p = placement.get(from);
    placement.delete(from);
    if (p) placement.set(to, p);
    after(i + 1);
    push(i + 1);
  });
  return out;
}

/** The variant's hooks for the game page (see clients.js). */
export const yanyiClient = {
  key: 'yanyi',
  sideName: seatName,
  /** The letter of a seat's colour, for CSS (`dot-G`, `side-R`, `by-B`). */
  colour: (seat) => SEAT_COLOUR[seat] || seat,
  /** The board view that puts a seat's camp at the bottom. */
  view: (seat) => SEAT_COLOUR[seat] || 'R',
  placement: (status) => parsePlacement(status.position, (status.yanyi && status.yanyi.held) || {}),
  placementOfText: (text) => parsePlacement(text),
  pieceChar,
  kingChar: (seat) => pieceChar({ side: SEAT_COLOUR[seat], piece: 'K' }),
  /** The colours whose kings are ringed as allied on the board. */
  alliedMarks: (status) => ((status.yanyi && status.yanyi.alliance) || []).map((s) => SEAT_COLOUR[s]),
  /** The colours whose king is marked in check. */
  checkedMarks: (seats) => seats.map((s) => SEAT_COLOUR[s]),
  turnText,
  statusNotes,
  notedText,
  /** A click on a piece the viewer may not move: 汉's belongs to nobody. */
  pieceRefusal: (p, turn) =>
    p.side === 'Y'
      ? { code: 'han_never_moves', params: { piece: `${p.side}${p.piece}` } }
      : { code: 'not_your_piece', params: { piece: `${p.side}${p.piece}`, owner: COLOUR_SEAT[p.side], turn } },
  refusalText,
  ruleLinkText,
  /** No limit on draw offers; only the player to move offers. */
  offersLeft: () => null,
  canOffer: (status, me) => status.turn === me,
  premature: () => false,
  /** Beside a seat's clock: its alliance (盟) and the 汉 force it holds (汉). */
  clockBadges(status, seat) {
    const y = status.yanyi;
    if (!y) return [];
    const out = [];
    if (y.alliance && y.alliance.includes(seat)) {
      const other = y.alliance.find((s) => s !== seat);
      out.push({ cls: 'allied', text: '盟', title: tx('alliance', { a: seatName(seat, true), b: seatName(other, true) }) });
    }
    if (y.han && y.han.state !== 'static' && y.han.holder === seat && status.live.includes(seat)) {
      out.push({ cls: 'han', text: '汉', title: tx(y.han.state === 'killed' ? 'hanKilled' : 'hanAllied', { holder: seatName(seat, true) }) });
    }
    return out;
  },
  /** The board cannot be rebuilt from moves alone here (alliances, absorptions): no browsing. */
  browsable: false,
  /** The replay page's positions and states, from the record's notes and departures. */
  replayTimeline,
  /** A seat that has left, beside its name on the replay page. */
  outText: () => tx('seatOut'),
  /** Each opponent's last move (被将先走 can give one of them two in a row). */
  recent(moves, sides, me) {
    const out = [];
    const seen = new Set([me]);
    for (let i = moves.length - 1; i >= 0 && seen.size < 3; i--) {
      const side = sides[i];
      if (!side || seen.has(side)) continue;
      seen.add(side);
      const [from, to] = moves[i].split('-');
      out.unshift({ from, to, side: SEAT_COLOUR[side] });
    }
    return out;
  },
};
