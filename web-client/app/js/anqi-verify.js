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
//
// Rooms deal by the seat-entropy scheme (docs/ANQI-DEAL.md §4): the server
// published hex(SHA-256(server_seed)) at creation, each seat may have sent a
// 32-byte seed, and the layout and salt are derived from them with
// HMAC-SHA-256; at the end the server seed is published. `verifySeats` checks
// the hash and re-derives the layout and salt (then the commitment and flips
// are checked as above).

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

const subtle = () => (globalThis.crypto && crypto.subtle && crypto.subtle.digest ? crypto.subtle : null);

/** Bytes of a lowercase hex text (`null` unless it is exactly that). */
export function fromHex(text) {
  if (typeof text !== 'string' || text.length % 2 || !/^[0-9a-f]*$/.test(text)) return null;
  const out = new Uint8Array(text.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(text.slice(2 * i, 2 * i + 2), 16);
  return out;
}

const concat = (...parts) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let off = 0;
  for (const p of parts) {
    out.set(p, off);
    off += p.length;
  }
  return out;
};

/** RFC 2104 HMAC-SHA-256 on top of the fallback SHA-256 (block of 64 bytes). */
function hmacFallback(key, msg) {
  const k = key.length > 64 ? sha256Fallback(key) : key;
  const block = new Uint8Array(64);
  block.set(k);
  const ipad = block.map((b) => b ^ 0x36);
  const opad = block.map((b) => b ^ 0x5c);
  return sha256Fallback(concat(opad, sha256Fallback(concat(ipad, msg))));
}

/**
 * HMAC-SHA-256(key, msg) of bytes: WebCrypto, or the fallback without a
 * secure context (`{fallback: true}` forces it, for the tests).
 */
export async function hmacSha256(key, msg, { fallback = false } = {}) {
  const s = !fallback && subtle();
  if (s) {
    const k = await s.importKey('raw', key, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
    return new Uint8Array(await s.sign('HMAC', k, msg));
  }
  return hmacFallback(key, msg);
}

/** SHA-256 of bytes, as hex. */
async function sha256BytesHex(bytes, fallback) {
  const s = !fallback && subtle();
  if (s) return hex(new Uint8Array(await s.digest('SHA-256', bytes)));
  return hex(sha256Fallback(bytes));
}

const ascii = (text) => new TextEncoder().encode(text);

/**
 * The deal key K (docs/ANQI-DEAL.md §4.2): HMAC(server_seed,
 * "sanguo-anqi-seats/1\n" ‖ game_id ‖ "\n" ‖ hex(seed_1) ‖ "\n" ‖ … ‖ hex(seed_3) ‖ "\n").
 * `seeds` are 3 hex texts or null (a seat that sent none: 32 zero bytes).
 */
export async function seatKey(serverSeedHex, gameId, seeds, opts) {
  const zero = '0'.repeat(64);
  const msg = `sanguo-anqi-seats/1\n${gameId}\n${seeds.map((x) => `${x || zero}\n`).join('')}`;
  return hmacSha256(fromHex(serverSeedHex), ascii(msg), opts);
}

/**
 * The layout and salt of the seat-entropy deal (§4.2): the §1 shuffle with
 * draws from the stream HMAC(K, "layout\n" ‖ be64(n)), n = 0, 1, …, read 4
 * bytes big-endian at a time, rejection-sampled; salt = HMAC(K, "salt\n").
 * Returns `{key, layout, saltHex}` (hex key).
 */
export async function seatEntropyDeal(serverSeedHex, gameId, seeds, opts) {
  const key = await seatKey(serverSeedHex, gameId, seeds, opts);
  let block = new Uint8Array(0);
  let used = 0;
  let counter = 0;
  const next = async () => {
    if (used === block.length) {
      const n = new Uint8Array(8);
      new DataView(n.buffer).setUint32(0, Math.floor(counter / 2 ** 32));
      new DataView(n.buffer).setUint32(4, counter >>> 0);
      block = await hmacSha256(key, concat(ascii('layout\n'), n), opts);
      counter += 1;
      used = 0;
    }
    const x = new DataView(block.buffer, block.byteOffset + used, 4).getUint32(0);
    used += 4;
    return x;
  };
  const draw = async (i) => {
    const m = i + 1;
    const limit = 2 ** 32 - (2 ** 32 % m);
    for (;;) {
      const x = await next();
      if (x < limit) return x % m;
    }
  };
  const items = [...FULL_SET];
  for (let i = 31; i >= 1; i--) {
    const j = await draw(i);
    [items[i], items[j]] = [items[j], items[i]];
  }
  const salt = await hmacSha256(key, ascii('salt\n'), opts);
  return { key: hex(key), layout: items.join(''), saltHex: hex(salt) };
}

/**
 * The seat-entropy checks of a finished game (docs/ANQI-DEAL.md §4.1):
 * `SHA256(server_seed) == server_hash`, and the layout and salt derived from
 * the server seed, the game id and the published seeds are the published
 * ones. Returns `{ok, reasons, hash, layout, salt}` (each check true/false).
 */
export async function verifySeats({ gameId, serverHash, serverSeed, seeds, layout, saltHex }, opts = {}) {
  const reasons = [];
  const res = { ok: false, reasons, hash: false, layout: false, salt: false };
  const seed = fromHex(serverSeed || '');
  if (!seed || seed.length !== 32) {
    reasons.push('the server seed is not published as 64 lowercase hex digits (is the game over?)');
    return res;
  }
  const bad = (seeds || []).find((x) => x != null && !/^[0-9a-f]{64}$/.test(x));
  if (!seeds || seeds.length !== 3 || bad !== undefined) {
    reasons.push('the seats\' seeds are not three 64-digit hex texts (or null)');
    return res;
  }
  const h = await sha256BytesHex(seed, opts.fallback);
  res.hash = h === serverHash;
  if (!res.hash) reasons.push(`SHA-256 of the server seed is ${h}, but the server announced ${serverHash}`);
  const d = await seatEntropyDeal(serverSeed, gameId, seeds, opts);
  res.layout = d.layout === layout;
  res.salt = d.saltHex === saltHex;
  if (!res.layout) reasons.push(`the seeds give the layout ${d.layout}, but the server published ${layout}`);
  if (!res.salt) reasons.push(`the seeds give the salt ${d.saltHex}, but the server published ${saltHex}`);
  res.ok = reasons.length === 0;
  return res;
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
 * `{ok, reasons: [text…], flips, commitmentOk, revealsOk}`: `ok` only when the
 * commitment matches, the layout is a permutation of the full set and every
 * revealed identity is the layout's letter on its point (each start point
 * revealed at most once).
 */
export async function verifyDeal({ gameId, commitment, layout, saltHex, reveals }) {
  const reasons = [];
  if (!commitment) reasons.push('no commitment was announced');
  if (!layout || !saltHex) {
    reasons.push('the layout and salt are not published (is the game over?)');
    return { ok: false, reasons, flips: 0, commitmentOk: false, revealsOk: false };
  }
  if (!/^[0-9a-f]{64}$/.test(saltHex)) reasons.push('the salt is not 64 lowercase hex digits');
  if (commitment) {
    const c = await commitmentOf(gameId, layout, saltHex);
    if (c !== commitment) reasons.push(`the commitment does not match: SHA-256 of the published deal is ${c}, the announced one ${commitment}`);
  }
  const commitmentOk = reasons.length === 0;
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
  const revealsOk = flips === reveals.length && !reasons.some((r) => r.includes('permutation'));
  return { ok: reasons.length === 0, reasons, flips, commitmentOk, revealsOk };
}
