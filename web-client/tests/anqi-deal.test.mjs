// 三国暗棋's deal in plain node (no server, no browser): the verifier's
// SHA-256, HMAC-SHA-256 and seat-entropy derivation against the test vectors
// of docs/ANQI-DEAL.md, through WebCrypto and through the fallback used on
// pages without a secure context; a changed seed or server seed fails.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { commitmentOf, hmacSha256, seatKey, seatEntropyDeal, verifySeats, sha256HexFallback, preimage, fromHex } from '../app/js/anqi-verify.js';

const GAME = '3f2c9a8e-5b1d-4e7a-9c6f-0a1b2c3d4e5f';
const bytes = (from) => Array.from({ length: 32 }, (_, i) => (from + i).toString(16).padStart(2, '0')).join('');
const SERVER = bytes(0x00);
const SEEDS = [bytes(0x20), bytes(0x40), bytes(0x60)];
const hex = (b) => [...b].map((x) => x.toString(16).padStart(2, '0')).join('');

test('the §10.4 commitment vector', async () => {
  assert.equal(await commitmentOf(GAME, 'NRPcpARnppPErACKcPPraPanepEepkCN', SERVER), 'a35cfd40c26e404c87d1541cccdc183ecea1fc70128f2861a9ce725f5d27370c');
  assert.equal(sha256HexFallback(preimage(GAME, 'NRPcpARnppPErACKcPPraPanepEepkCN', SERVER)), 'a35cfd40c26e404c87d1541cccdc183ecea1fc70128f2861a9ce725f5d27370c');
});

test('HMAC-SHA-256: RFC 4231 case 2, WebCrypto and fallback', async () => {
  const key = new TextEncoder().encode('Jefe');
  const msg = new TextEncoder().encode('what do ya want for nothing?');
  const want = '5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843';
  assert.equal(hex(await hmacSha256(key, msg)), want);
  assert.equal(hex(await hmacSha256(key, msg, { fallback: true })), want);
  // a key longer than the block is hashed first (RFC 4231 case 6)
  const long = new Uint8Array(131).fill(0xaa);
  const m6 = new TextEncoder().encode('Test Using Larger Than Block-Size Key - Hash Key First');
  const w6 = '60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54';
  assert.equal(hex(await hmacSha256(long, m6)), w6);
  assert.equal(hex(await hmacSha256(long, m6, { fallback: true })), w6);
});

for (const fallback of [false, true]) {
  test(`the seat-entropy vector of docs/ANQI-DEAL.md §4.3 (${fallback ? 'fallback' : 'WebCrypto'})`, async () => {
    const opts = { fallback };
    assert.equal(hex(await seatKey(SERVER, GAME, SEEDS, opts)), 'c0c556062f25ee9e3f6067249e1cacebb528158854ba23a46b4c4701970a167e');
    const d = await seatEntropyDeal(SERVER, GAME, SEEDS, opts);
    assert.equal(d.layout, 'PkePPNnneKprAcCCAPaERpRNcEarpPpp');
    assert.equal(d.saltHex, '800c06efebd63ea7f5b2c5ccfe8c61196958b8b33c6f625154df19a44452e82e');
    assert.equal(await commitmentOf(GAME, d.layout, d.saltHex), '9ec128c1cfd06cff656a4a67b1a95c96f3e1ff997f750583cb663d60041955aa');
    const published = { gameId: GAME, serverHash: '630dcd2966c4336691125448bbb25b4ff412a49c732db2c8abc1b8581bd710dd', serverSeed: SERVER, seeds: SEEDS, layout: d.layout, saltHex: d.saltHex };
    const ok = await verifySeats(published, opts);
    assert.deepEqual({ ok: ok.ok, hash: ok.hash, layout: ok.layout, salt: ok.salt }, { ok: true, hash: true, layout: true, salt: true }, ok.reasons.join('; '));
    // another seat seed gives another layout; another server seed fails the hash
    const other = await verifySeats({ ...published, seeds: [SEEDS[0], SEEDS[1], bytes(0x61)] }, opts);
    assert.equal(other.ok, false);
    assert.equal(other.hash, true);
    assert.equal(other.layout, false);
    const lied = await verifySeats({ ...published, serverSeed: bytes(0x01) }, opts);
    assert.equal(lied.hash, false);
    assert.equal(lied.ok, false);
  });
}

test('a seat that sent no seed counts as 32 zero bytes', async () => {
  const zero = '0'.repeat(64);
  const a = await seatEntropyDeal(SERVER, GAME, [SEEDS[0], null, SEEDS[2]]);
  const b = await seatEntropyDeal(SERVER, GAME, [SEEDS[0], zero, SEEDS[2]]);
  assert.deepEqual(a, b);
  assert.equal(fromHex('AB'), null, 'uppercase is not the wire form');
});
