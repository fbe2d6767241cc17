// What the game page needs to know of each game system beyond its board (the
// board comes from the server's description): seat names, the placement
// field of its position text, piece characters, the notes its status block
// carries, its refusals, its draw-offer limits. The game page branches on the
// variant here and nowhere else.

import { t, sideName } from './i18n.js';
import { parsePlacement, PIECE_CHARS } from './geometry.js';
import { refusalText, ruleLinkText } from './refusal.js';
import { yanyiClient } from './yanyi.js';

const SIDES = ['W', 'B', 'Y'];

/** 三国象棋's §6 counters near their limits (the limits come from the server's snapshot). */
function counterNotes(s, me, L) {
  const c = s.counters;
  if (!c || !L) return [];
  const phase3 = s.live.length === 3;
  const k = phase3 ? 0 : 1;
  const res = [];
  const note = (text) => res.push({ cls: 'warn counter', text });
  const np = L.no_progress_plies[k];
  if (c.plies_without_progress >= np * 0.6) note(t('c_noProgress', { n: c.plies_without_progress, max: np }));
  if (!phase3 && c.phase2_plies >= L.phase2_plies / 2) note(t('c_phase2', { n: c.phase2_plies, max: L.phase2_plies }));
  const consecMax = L.consecutive_checks[k];
  const cumMax = L.cumulative_checks[k];
  SIDES.forEach((by, i) =>
    SIDES.forEach((on, j) => {
      if (i === j) return;
      const n = c.consecutive_checks[i][j];
      if (n >= Math.max(2, consecMax - 3)) note(t('c_consec', { by: sideName(by, true), on: sideName(on, true), n, max: consecMax }));
      const m = c.cumulative_checks[i][j];
      if (m >= cumMax * 0.6) note(t('c_cumul', { by: sideName(by, true), on: sideName(on, true), n: m, max: cumMax }));
    }),
  );
  return res;
}

/** 三国象棋: seats are its sides (W 魏, B 蜀, Y 吴), colours and views alike. */
export const sanguoClient = {
  key: 'sanguo',
  sideName,
  colour: (seat) => seat,
  view: (seat) => seat,
  placement: (status) => parsePlacement(status.position),
  placementOfText: parsePlacement,
  pieceChar: (p) => (PIECE_CHARS[p.side] || {})[p.piece] || p.piece,
  kingChar: (seat) => PIECE_CHARS[seat].K,
  checkedMarks: (seats) => seats,
  turnText: () => null,
  statusNotes: counterNotes,
  notedText: () => null,
  /** A click on a piece the viewer may not move. */
  pieceRefusal: (p, turn) => ({ code: 'not_your_piece', params: { piece: `${p.side}${p.piece}`, owner: p.side, turn } }),
  refusalText,
  ruleLinkText,
  offersLeft: (status, limits, me) => limits.draw_offers_per_side - status.counters.draw_offers_made[SIDES.indexOf(me)],
  canOffer: () => true,
  premature: () => true,
  browsable: true,
  /** Marks beside a seat's clock (none in 三国象棋). */
  clockBadges: () => [],
  /** Each move played since the viewer's own last one (its opponents' replies). */
  recent(moves, sides, me) {
    const out = [];
    for (let i = moves.length - 1; i >= 0 && out.length < 2; i--) {
      const side = sides[i];
      if (!side || side === me) break;
      const [from, to] = moves[i].split('-');
      out.unshift({ from, to, side });
    }
    return out;
  },
};

const CLIENTS = { sanguo: sanguoClient, yanyi: yanyiClient };

/** The hooks of a variant (三国象棋's for a game stored before variants). */
export function clientOf(variant) {
  return CLIENTS[variant || 'sanguo'] || sanguoClient;
}
