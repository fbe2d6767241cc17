// Why a move is refused, in the player's language: the server asks the engine
// (POST /api/games/{id}/explain) and answers a code with parameters
// (protocol/README.md, "Explain"); this module words it. The client itself
// applies no rule.

import { getLang, sideName } from './i18n.js';
import { PIECE_CHARS } from './geometry.js';

const ROLE = {
  en: { K: 'king', Z: 'prince', F: 'consort', A: 'advisor', E: 'elephant', R: 'chariot', N: 'horse', C: 'cannon', P: 'soldier' },
  zh: { K: '帅', Z: '子', F: '妃', A: '仕', E: '相', R: '车', N: '马', C: '炮', P: '兵' },
};

const REGION = {
  en: {
    king_palace: 'a king stays in its palace and rear palace (files 4–6, ranks 1–4)',
    consort_palace: 'a consort stays in its palace and rear palace (files 4–6, ranks 1–4)',
    advisor_palace: 'an advisor stays in its palace (files 4–6, ranks 2–4)',
    elephant_own: 'while three sides play, an elephant stays in its own rectangle',
    elephant_phase2: 'an elephant may go to its own rectangle, the opponent’s and the fans, never the eliminated side’s',
    soldier_zone: 'a soldier never enters its own no-soldier zone (its ranks 1–5)',
    soldier_forward: 'inside its own zone a soldier only steps forward along its file',
    soldier_through: 'a soldier never passes through its own no-soldier zone',
    other: 'the piece may not leave its region',
  },
  zh: {
    king_palace: '帅（将）只在本方九宫与后宫内走（4–6路，1–4线）',
    consort_palace: '妃只在本方九宫与后宫内走（4–6路，1–4线）',
    advisor_palace: '仕只在本方九宫内走（4–6路，2–4线）',
    elephant_own: '三方对局时，相只在本方区域内走',
    elephant_phase2: '相可到本方、对方区域与扇形区，不可进入出局一方的区域',
    soldier_zone: '兵不能进入本方禁兵区（本方1–5线）',
    soldier_forward: '在本方区域内兵只能沿本路向前走',
    soldier_through: '兵不能穿过本方禁兵区',
    other: '该子不能离开其活动区域',
  },
};

const TEXT = {
  en: {
    not_your_turn: 'Not your turn: it is {turn}’s move.',
    game_over: 'The game is over.',
    not_started: 'The game has not started: it waits for players.',
    paused: 'The arbiter paused the clocks: no move until they run again.',
    no_piece: 'There is no piece on {point}.',
    not_your_piece: 'Not your piece: that {piece} belongs to {owner}.',
    own_piece: 'You cannot capture your own {piece}.',
    not_this_pieces_move: 'A {piece} does not move that way.',
    eye_blocked: 'Blocked: the elephant’s eye {point} is occupied (塞相眼).',
    eye_not_grid: 'The elephant’s eye {point} is not a point of the board.',
    leg_blocked: 'Blocked: the horse’s leg {point} is occupied (蹩马腿).',
    path_blocked: 'Blocked: a piece on {point} stands in the way.',
    cannon_screen: 'A cannon captures by jumping exactly one piece; {count} stand between.',
    outside_region: 'Outside its region: {rule}.',
    no_retaliation_right: '先击后攻: {mover} may not capture a piece of its upstream side {upstream} until {upstream} has captured or checked first.',
    no_king_capture_this_turn: 'No king may be captured on the turn right after a side left by resignation, time or penalty.',
    king_attacked_upstream: 'Your king would stand attacked by {by}.',
    king_attacked_provoked: 'Your king would stand attacked by {by}: this move captures or checks {by}, which may then strike back.',
    king_attacked_standing: 'Your king stays in {by}’s retaliation check: escape it first.',
    kings_face: 'The kings would face each other: your king would see {side}’s king (照面).',
    other: 'This move is not legal here.',
    rule: 'the rule',
  },
  zh: {
    not_your_turn: '还没轮到你：现在是{turn}走棋。',
    game_over: '对局已结束。',
    not_started: '对局还没开始：等待棋手入座。',
    paused: '裁判暂停了计时：恢复之前不能走棋。',
    no_piece: '{point} 上没有棋子。',
    not_your_piece: '这不是你的棋子：这个{piece}属于{owner}。',
    own_piece: '不能吃自己的{piece}。',
    not_this_pieces_move: '{piece}不能这样走。',
    eye_blocked: '塞相眼：相眼 {point} 上有子。',
    eye_not_grid: '相眼 {point} 不是棋盘上的点。',
    leg_blocked: '蹩马腿：马腿 {point} 上有子。',
    path_blocked: '被挡住：{point} 上有子。',
    cannon_screen: '炮吃子必须恰好隔一个子；中间有 {count} 个。',
    outside_region: '出了活动区域：{rule}。',
    no_retaliation_right: '先击后攻：{upstream}先吃过或将过{mover}之前，{mover}不能吃上家{upstream}的子。',
    no_king_capture_this_turn: '有一方因认输、超时或判负出局后的这一轮，不能吃帅（将）。',
    king_attacked_upstream: '走后你的帅（将）会被{by}攻击。',
    king_attacked_provoked: '走后你的帅（将）会被{by}攻击：这步吃了或将了{by}，它就可以反击。',
    king_attacked_standing: '你仍被{by}反击将军：必须先应将。',
    kings_face: '照面：走后你的帅（将）会与{side}的帅（将）对面。',
    other: '这步棋在此处不合规则。',
    rule: '规则',
  },
};

/** The rules page section each refusal cites (#/rules#…). */
const RULE_OF = {
  not_your_piece: 'turns',
  not_your_turn: 'turns',
  own_piece: 'moves',
  not_this_pieces_move: 'moves',
  eye_blocked: 'elephant',
  eye_not_grid: 'elephant',
  leg_blocked: 'horse',
  path_blocked: 'moves',
  cannon_screen: 'cannon',
  outside_region: 'regions',
  no_retaliation_right: 'retaliation',
  no_king_capture_this_turn: 'sudden-death',
  king_attacked: 'check',
  kings_face: 'check',
};

function pieceName(code, lang) {
  if (!code || code.length < 2) return code || '';
  const [side, role] = [code[0], code[1]];
  if (lang === 'zh') return `${sideName(side, true)}${(PIECE_CHARS[side] || {})[role] || ROLE.zh[role] || role}`;
  return `${sideName(side, true)} ${ROLE.en[role] || role}`;
}

/**
 * The sentence for a refusal `{code, params}` and the rules section it cites:
 * `{text, rule}` (`rule` null when none).
 */
export function refusalText(refusal) {
  const lang = getLang() === 'zh' ? 'zh' : 'en';
  const dict = TEXT[lang];
  const p = { ...(refusal.params || {}) };
  for (const k of ['mover', 'upstream', 'owner', 'turn', 'by', 'side']) if (p[k]) p[k] = sideName(p[k], true);
  if (p.piece) p.piece = pieceName(refusal.params.piece, lang);
  if (refusal.code === 'outside_region') p.rule = REGION[lang][p.rule] || REGION[lang].other;
  const key = refusal.code === 'king_attacked' ? `king_attacked_${(refusal.params || {}).why || 'upstream'}` : refusal.code;
  const template = dict[key] || dict.other;
  return { text: template.replace(/\{(\w+)\}/g, (_, k) => p[k] ?? `{${k}}`), rule: RULE_OF[refusal.code] || null };
}

/** The link text of a rules citation. */
export function ruleLinkText() {
  return TEXT[getLang() === 'zh' ? 'zh' : 'en'].rule;
}
