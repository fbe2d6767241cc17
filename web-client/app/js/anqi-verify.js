// 三国暗棋: checks a finished game's deal (RULES-ANQI §10.5) in the browser.
// The server announced a commitment before the first action and published the
// layout and salt at the end; this recomputes the §10.4 SHA-256 commitment
// from them and follows every identity the record revealed (each flip, each
// 收军 removal of a face-down piece), which must be the layout's letter on that
// point: face-down pieces never move (§4), so a layout fixes every flip.
//
// The exact bytes (protocol/README.md, "三国暗棋"):
//   preimage   = "sanguo-anqi/1\n" + game_id + "\n" + layout + "\n" + salt_hex + "\n"
//   commitment = lowercase hex of SHA-256(preimage as ASCII)
// where game_id is the id exactly as the server sends it (12 base-32 characters).

/** The full set in canonical order (§2.1). */
export const FULL_SET = 'KAAEERRNNCCPPPPPkaaeerrnnccppppp';

/** The 32 start points in ascending index (§1): files a–d and f–i of ranks 1, 2, 4, 5. */
export const START_POINTS = (() => {
  const out = [];
  for (let i = 0; i < 45; i++) {
    const file = i % 9;
    const rank = Math.floor(i / 9);
    if (file !== 4 && rank !== 2) out.push(`${'abcdefghi'[file]}${rank + 1}`);
  }
  return out;
})();

/** The §10.4 preimage. */
export function preimage(gameId, layout, saltHex) {
  return `sanguo-anqi/1\n${gameId}\n${layout}\n${saltHex}\n`;
}

const hex = (bytes) => [...bytes].map((b) => b.toString(16).padStart(2, '0')).join('');

/** Lowercase hex SHA-256 of an ASCII/UTF-8 text: WebCrypto, or the small fallback below. */
export async function sha256Hex(text) {
  const data = new TextEncoder().encode(text);
  if (globalThis.crypto && crypto.subtle && crypto.subtle.digest) {
    return hex(new Uint8Array(await crypto.subtle.digest('SHA-256', data)));
  }
  return hex(sha256Fallback(data));
}

// FIPS 180-4 SHA-256, for pages served without a secure context (crypto.subtle
// exists only on https or localhost). Checked against WebCrypto by the browser test.
function sha256Fallback(msg) {
  const K = new Uint32Array([
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
    0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
    0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
  ]);
  const H = new Uint32Array([0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]);
  const len = msg.length;
  const total = Math.ceil((len + 9) / 64) * 64;
  const buf = new Uint8Array(total);
  buf.set(msg);
  buf[len] = 0x80;
  const view = new DataView(buf.buffer);
  view.setUint32(total - 8, Math.floor((len * 8) / 2 ** 32));
  view.setUint32(total - 4, (len * 8) >>> 0);
  const w = new Uint32Array(64);
  const rotr = (x, n) => (x >>> n) | (x << (32 - n));
  for (let off = 0; off < total; off += 64) {
    for (let i = 0; i < 16; i++) w[i] = view.getUint32(off + 4 * i);
    for (let i = 16; i < 64; i++) {
      const s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >>> 3);
      const s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >>> 10);
      w[i] = (w[i - 16] + s0 + w[i - 7] + s1) >>> 0;
    }
    let [a, b, c, d, e, f, g, h] = H;
    for (let i = 0; i < 64; i++) {
      const t1 = (h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + K[i] + w[i]) >>> 0;
      const t2 = ((rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c))) >>> 0;
      h = g;
      g = f;
      f = e;
      e = (d + t1) >>> 0;
      d = c;
      c = b;
      b = a;
      a = (t1 + t2) >>> 0;
    }
    H[0] += a;
    H[1] += b;
    H[2] += c;
    H[3] += d;
    H[4] += e;
    H[5] += f;
    H[6] += g;
    H[7] += h;
  }
  const out = new Uint8Array(32);
  const ov = new DataView(out.buffer);
  H.forEach((x, i) => ov.setUint32(4 * i, x));
  return out;
}

/** Exposed for the browser test: the fallback must agree with WebCrypto. */
export function sha256HexFallback(text) {
  return hex(sha256Fallback(new TextEncoder().encode(text)));
}

/** The §10.4 commitment of a deal. */
export function commitmentOf(gameId, layout, saltHex) {
  return sha256Hex(preimage(gameId, layout, saltHex));
}

/**
 * Every identity a record revealed, in order: `{point, piece, what}` for each
 * flip (`+b2` that revealed `R`) and each face-down piece a 收军 removal showed
 * (`shoujun 1 a1=C +b2=R`: the `+` tokens). `moves` are the record's moves
 * ({mv, revealed}), `notes` its noted lines (text).
 */
export function revealsOf(moves, notes) {
  const out = [];
  for (const m of moves) {
    const f = /^\+([a-i][1-5])(?:=([KAERNCPkaerncp]))?$/.exec(m.mv);
    if (f) out.push({ point: f[1], piece: m.revealed || f[2] || null, what: m.mv });
  }
  for (const text of notes) {
    if (!text.startsWith('shoujun ')) continue;
    for (const w of text.split(' ').slice(2)) {
      const r = /^\+([a-i][1-5])=([KAERNCPkaerncp])$/.exec(w);
      if (r) out.push({ point: r[1], piece: r[2], what: text });
    }
  }
  return out;
}

/**
 * RULES-ANQI §10.5 steps 1–2 and the flips of step 3. Returns
 * `{ok, reasons: [text…], flips}`: `ok` only when the commitment matches, the
 * layout is a permutation of the full set and every revealed identity is the
 * layout's letter on its point (each start point revealed at most once).
 */
export async function verifyDeal({ gameId, commitment, layout, saltHex, reveals }) {
  const reasons = [];
  if (!commitment) reasons.push('no commitment was announced');
  if (!layout || !saltHex) {
    reasons.push('the layout and salt are not published (is the game over?)');
    return { ok: false, reasons, flips: 0 };
  }
  if (!/^[0-9a-f]{64}$/.test(saltHex)) reasons.push('the salt is not 64 lowercase hex digits');
  if (commitment) {
    const c = await commitmentOf(gameId, layout, saltHex);
    if (c !== commitment) reasons.push(`the commitment does not match: SHA-256 of the published deal is ${c}, the announced one ${commitment}`);
  }
  const sorted = (s) => [...s].sort().join('');
  if (layout.length !== 32 || sorted(layout) !== sorted(FULL_SET)) reasons.push('the layout is not a permutation of the 32 pieces');
  const seen = new Set();
  let flips = 0;
  for (const r of reveals) {
    const k = START_POINTS.indexOf(r.point);
    if (k < 0) {
      reasons.push(`${r.what}: ${r.point} is not a start point, so nothing face down stood there`);
      continue;
    }
    if (seen.has(r.point)) reasons.push(`${r.what}: ${r.point} was revealed twice`);
    seen.add(r.point);
    if (!r.piece) reasons.push(`${r.what}: the record does not say what was revealed`);
    else if (layout[k] !== r.piece) reasons.push(`${r.what}: revealed ${r.piece}, but the layout has ${layout[k]} on ${r.point}`);
    else flips += 1;
  }
  return { ok: reasons.length === 0, reasons, flips };
}
