// Board geometry of RULES §2, computed from its formulas (unit = line spacing,
// origin O = board centre, y up). The browser never applies rules: this is
// only where to draw. tests/render.test.mjs checks every point against
// shared/board/points.tsv.

export const SIDES = ['W', 'B', 'Y'];
export const H = 2 * Math.sqrt(3);

const DEG = Math.PI / 180;

export function rotate([x, y], deg) {
  const a = deg * DEG;
  const c = Math.cos(a);
  const s = Math.sin(a);
  return [x * c - y * s, x * s + y * c];
}

/** Rotation of side index s about O (W 0°, B +120°, Y +240°). */
export const sideAngle = (s) => 120 * s;

/** Next side counterclockwise (the fan's far side N). */
export const nextCcw = (s) => (s + 1) % 3;

/** Centre P_X of side s's fan, in board coordinates. */
export function fanCentre(s) {
  return rotate([Math.sqrt(3) * H, -H], sideAngle(s));
}

function fanPoint(s, radius, deg) {
  const [px, py] = fanCentre(s);
  const a = (deg + sideAngle(s)) * DEG;
  return [px + radius * Math.cos(a), py + radius * Math.sin(a)];
}

/** All 184 points: [{name, index, x, y}] in canonical index order. */
export function points() {
  const out = [];
  SIDES.forEach((side, s) => {
    for (let r = 1; r <= 6; r++) {
      for (let f = 1; f <= 9; f++) {
        const [x, y] = rotate([f - 5, -(H + 6 - r)], sideAngle(s));
        out.push({ name: `${side}${f}${r}`, index: s * 54 + (r - 1) * 9 + (f - 1), x, y });
      }
    }
  });
  SIDES.forEach((side, s) => {
    const fan = [
      ['M5', 6, 150], ['M6', 5, 150], ['M7', 4, 150], ['M8', 3, 150], ['M9', 2, 150],
      ['Q6', 5, 165], ['Q7', 4, 165],
    ];
    fan.forEach(([k, rho, deg], i) => {
      const [x, y] = fanPoint(s, rho, deg);
      out.push({ name: `${side}${k}`, index: 162 + s * 7 + i, x, y });
    });
  });
  out.push({ name: 'O', index: 183, x: 0, y: 0 });
  return out;
}

/**
 * The drawn figure: straight segments, arcs and dashed diagonals, by point names.
 * segments: [[a, b]], arcs: [{from, to, radius, centre: side index}], dashed: [[a, b]].
 */
export function figure() {
  const segments = [];
  const arcs = [];
  const dashed = [];
  SIDES.forEach((X, s) => {
    const N = SIDES[nextCcw(s)];
    // the rectangle: 6 ranks and 9 files
    for (let r = 1; r <= 6; r++) segments.push([`${X}1${r}`, `${X}9${r}`]);
    for (let f = 1; f <= 9; f++) segments.push([`${X}${f}1`, `${X}${f}6`]);
    // the fan: five arcs centred at P_X from X's file f to N's file 10-f
    for (let f = 5; f <= 9; f++) arcs.push({ from: `${X}${f}6`, to: `${N}${10 - f}6`, radius: 11 - f, centre: s });
    // the axis line across the fan (through O to the 底弧) and the file-5 line to O
    segments.push(['O', `${X}M9`]);
    segments.push([`${X}56`, 'O']);
    // the side-axis line
    segments.push([`${X}Q6`, `${X}Q7`]);
    // palace and rear-palace diagonals (dashed)
    dashed.push([`${X}42`, `${X}64`], [`${X}62`, `${X}44`]);
    dashed.push([`${X}41`, `${X}52`], [`${X}42`, `${X}51`], [`${X}51`, `${X}62`], [`${X}52`, `${X}61`]);
  });
  return { segments, arcs, dashed };
}

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
