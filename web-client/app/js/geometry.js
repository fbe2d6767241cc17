// What the client knows of 三国象棋 beyond its board: the seats' letters, the
// pieces' characters (the captured lists and the move list print them) and
// the placement field of RULES §7 position text. The board itself — points,
// lines, arcs, areas, the seats' views — is drawn from the server's
// description (variants.js, board.js); tests/render.test.mjs checks every
// drawn point against shared/board/points.tsv.

export const SIDES = ['W', 'B', 'Y'];

/** Piece characters per side (W 魏, B 蜀, Y 吴) and piece letter. */
export const PIECE_CHARS = {
  W: { K: '魏', Z: '子', F: '妃', A: '仕', E: '相', R: '车', N: '马', C: '炮', P: '兵' },
  B: { K: '蜀', Z: '子', F: '妃', A: '士', E: '象', R: '车', N: '马', C: '炮', P: '卒' },
  Y: { K: '吴', Z: '子', F: '妃', A: '侍', E: '丞', R: '车', N: '马', C: '炮', P: '丁' },
};

/** Parses the placement field of a RULES §7 position text: Map point → {side, piece}. */
export function parsePlacement(positionText) {
  const map = new Map();
  const field = (positionText || '').split(' ')[0];
  if (!field) return map;
  for (const tok of field.split(',')) {
    const m = /^([WBY])([KZFAERNCP])@(.+)$/.exec(tok.trim());
    if (m) map.set(m[3], { side: m[1], piece: m[2] });
  }
  return map;
}

/** Serialises a placement map back into a placement field (order irrelevant to us). */
export function placementField(map) {
  return [...map].map(([pt, p]) => `${p.side}${p.piece}@${pt}`).join(',');
}
