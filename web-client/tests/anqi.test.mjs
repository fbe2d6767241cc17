// 三国暗棋 in three browsers against the real server: the lobby creates a race
// game with a small target, three players join by invite links (each page
// sends its own seed for the seat-entropy deal and shows it), flip by
// clicking face-down discs (claiming teams), move and capture by click–click
// until one reaches the target; a spectator watches the same board; the
// replay page verifies the deal (the server seed against its hash, the layout
// and salt re-derived from the seeds, the commitment and every flip). The
// rules page's 三国暗棋 article renders with its diagrams.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, launchBrowser, newPage, shot } from './helpers.mjs';

let server;
let browser;

before(async () => {
  server = await startServer();
  browser = await launchBrowser();
});

after(async () => {
  if (browser) await browser.close();
  if (server) await server.stop();
});

const state = (page) => page.evaluate(() => window.__sanguo && window.__sanguo.state && window.__sanguo.state.game && { ...window.__sanguo.state.game, role: window.__sanguo.state.role, side: window.__sanguo.state.side });

async function pointXY(page, name) {
  const box = await page.locator(`#board [data-point="${name}"]`).boundingBox();
  return [box.x + box.width / 2, box.y + box.height / 2];
}

/** Plays one action by clicking: a flip is one click on a disc, a move or capture two. */
async function clickAction(page, action) {
  const flip = /^\+([a-i][1-5])$/.exec(action);
  if (flip) {
    const [x, y] = await pointXY(page, flip[1]);
    await page.mouse.click(x, y);
    return;
  }
  const [, from, to] = /^([a-i][1-5])[-x]([a-i][1-5])$/.exec(action);
  const [fx, fy] = await pointXY(page, from);
  await page.mouse.click(fx, fy);
  await page.waitForSelector(`#board [data-dest="${to}"]`, { timeout: 5000 });
  const [tx, ty] = await pointXY(page, to);
  await page.mouse.click(tx, ty);
}

/** A capture when there is one (the race goes to the first to capture enough), else a flip, else a move. */
function pickAction(legal, ply) {
  const captures = legal.filter((m) => m.includes('x'));
  if (captures.length) return captures[0];
  const flips = legal.filter((m) => m.startsWith('+'));
  const list = flips.length ? flips : legal;
  return list[(ply * 7 + 3) % list.length];
}

test('three players flip, claim and capture by clicking; the replay verifies the deal', { timeout: 300000 }, async () => {
  const errors = [];
  const creator = await newPage(browser, { lang: 'en-US' }, errors);
  const { page } = creator;
  await page.goto(server.url + '/');
  await page.waitForSelector('#create-form');
  await page.selectOption('#variant', 'anqi');
  await page.waitForSelector('#anqi-options:not([hidden])');
  assert.equal(await page.getAttribute('#anqi-rules-lobby', 'href'), '#/rules/anqi-board');
  await page.selectOption('#anqi-mode', 'race');
  await page.fill('#anqi-target', '30');
  await page.selectOption('#my-seat', 'W');
  await page.click('#create-btn');
  await page.waitForSelector('#game[data-phase="open"]', { timeout: 30000 });
  const id = await page.getAttribute('#game', 'data-game');
  // the 9×5 board: 45 points, no piece before the start
  assert.equal(await page.locator('#board [data-point]').count(), 45);
  const others = [];
  for (const [seat, lang] of [
    ['B', 'zh-CN'],
    ['Y', 'en-US'],
  ]) {
    const p = await newPage(browser, { lang }, errors);
    await p.page.goto(`${server.url}/#/g/${id}?seat=${seat}`);
    others.push(p);
  }
  const pages = [page, ...others.map((p) => p.page)];
  const watcher = await newPage(browser, { lang: 'en-US' }, errors);
  await watcher.page.goto(`${server.url}/#/g/${id}`);
  for (const p of pages) await p.waitForSelector('#game[data-phase="live"]', { timeout: 30000 });
  await watcher.page.waitForSelector('#game[data-phase="live"][data-role="spectator"]', { timeout: 30000 });
  // every piece starts face down, as a blank disc
  assert.equal(await page.locator('#board .anqi-piece.down').count(), 32);
  assert.equal(await page.locator('#board .anqi-piece:not(.down)').count(), 0);
  const commitment = await page.getAttribute('#anqi-commitment', 'data-commitment');
  assert.match(commitment, /^[0-9a-f]{64}$/);
  // the seat-entropy deal: the server's hash, every seat's seed sent with its join, each page's own shown
  const serverHash = await page.getAttribute('#anqi-server-hash', 'data-server-hash');
  assert.match(serverHash, /^[0-9a-f]{64}$/);
  for (const p of pages) {
    await p.waitForSelector('#anqi-seeds[data-seeds="111"]', { timeout: 30000 });
    const mine = await p.evaluate((gid) => localStorage.getItem(`sanguo.anqi.seed.${gid}`), id);
    assert.match(mine, /^[0-9a-f]{64}$/);
    assert.equal(await p.getAttribute('#anqi-my-seed', 'data-seed'), mine, 'each page shows the seed it sent');
  }
  assert.equal(await watcher.page.locator('#anqi-my-seed').count(), 0, 'a spectator has no seed');
  // which page plays which seat (the server may draw the seating)
  const bySide = {};
  for (const p of pages) bySide[await p.getAttribute('#game', 'data-side')] = p;
  assert.deepEqual(Object.keys(bySide).sort(), ['B', 'W', 'Y']);

  let sawClaim = false;
  let sawCapture = false;
  for (let n = 0; n < 200; n++) {
    const st = await state(page);
    if (st.phase === 'finished') break;
    const turn = st.status.turn;
    const p = bySide[turn];
    await p.waitForSelector(`#game[data-ply="${st.status.ply}"][data-turn="${turn}"]`, { timeout: 30000 });
    const mine = await state(p);
    const action = pickAction(mine.status.legal_moves, mine.status.ply);
    if (action.includes('x')) sawCapture = true;
    await clickAction(p, action);
    await page.waitForFunction((ply) => {
      const g = window.__sanguo.state.game;
      return g.phase === 'finished' || g.status.ply > ply;
    }, st.status.ply, { timeout: 30000 });
    if (!sawClaim) {
      const s2 = await state(page);
      sawClaim = s2.status.anqi.teams.some((t) => t !== null);
      if (sawClaim) {
        // a flipped piece shows its character and its team's rim; the seat's badge its team
        const up = page.locator('#board .anqi-piece:not(.down)').first();
        assert.match(await up.getAttribute('data-team'), /^[123]$/);
        assert.match(await up.getAttribute('class'), /team-[123]/);
        await shot(page, 'anqi-after-first-flip.png');
      }
    }
  }
  assert.ok(sawClaim, 'a flip claimed a team');
  assert.ok(sawCapture, 'a capture was played');
  for (const p of [...pages, watcher.page]) await p.waitForSelector('#game[data-phase="finished"] #anqi-placing', { timeout: 30000 });
  const end = await state(page);
  assert.equal(end.result.ending.kind, 'anqi');
  assert.equal(end.result.ending.reason, 'race');
  assert.ok(end.result.scores.some((s) => s >= 30), JSON.stringify(end.result));
  assert.equal(end.status.anqi.commitment, commitment, 'the same commitment from start to end');
  assert.match(end.status.anqi.layout, /^[KAERNCPkaerncp]{32}$/);
  // the spectator saw the same board as the players
  assert.equal((await state(watcher.page)).status.position, end.status.position);
  await shot(page, 'anqi-finished.png');
  await shot(page, 'anqi-page.png', '#game');

  // The replay verifies the commitment this browser saw and every flip.
  await page.click('#replay-link');
  await page.waitForSelector('#replay[data-variant="anqi"][data-loaded="true"]', { timeout: 30000 });
  await page.waitForSelector('#anqi-verify[data-verified="true"]', { timeout: 30000 });
  assert.match(await page.locator('#anqi-verify').innerText(), /Deal verified/);
  // the seat-entropy checks passed, each named
  assert.equal(await page.getAttribute('#anqi-verify', 'data-seats-verified'), 'true');
  assert.match(await page.locator('#anqi-seats-verdict').innerText(), /Seat-entropy deal verified/);
  assert.equal(await page.locator('#anqi-checks li[data-pass="true"]').count(), 5);
  assert.equal(await page.locator('#anqi-checks li[data-pass="false"]').count(), 0);
  assert.match(await page.locator('#anqi-server-seed').innerText(), /^[0-9a-f]{64}$/);
  assert.ok(Number(await page.getAttribute('#replay', 'data-reveals')) > 0);
  // stepping back shows fewer face-up pieces
  await page.click('#rp-start');
  assert.equal(await page.locator('#board .anqi-piece.down').count(), 32);
  // a tampered layout would not verify: the verifier itself, with one letter changed
  const verdict = await page.evaluate(async (gid) => {
    const m = await import('/js/anqi-verify.js');
    const snap = await (await fetch(`/api/games/${gid}`)).json();
    const a = snap.status.anqi;
    const i = [...a.layout].findIndex((c) => c !== a.layout[0]);
    const letters = [...a.layout];
    [letters[0], letters[i]] = [letters[i], letters[0]];
    const swapped = letters.join('');
    const lines = a.record.filter((l) => /^\+[a-i][1-5]=/.test(l));
    const reveals = m.revealsOf(lines.map((mv) => ({ mv })), []);
    const ok = await m.verifyDeal({ gameId: gid, commitment: a.commitment, layout: a.layout, saltHex: a.salt, reveals });
    const bad = await m.verifyDeal({ gameId: gid, commitment: a.commitment, layout: swapped, saltHex: a.salt, reveals });
    const vector = await m.commitmentOf('3f2c9a8e-5b1d-4e7a-9c6f-0a1b2c3d4e5f', 'NRPcpARnppPErACKcPPraPanepEepkCN', '000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f');
    const fallback = m.sha256HexFallback(m.preimage('k7pq2xw9mde4', 'NRPcpARnppPErACKcPPraPanepEepkCN', '000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f'));
    return { ok: ok.ok, bad: bad.ok, vector, fallback };
  }, id);
  assert.equal(verdict.ok, true);
  assert.equal(verdict.bad, false, 'a changed layout fails the commitment');
  assert.equal(verdict.vector, 'a35cfd40c26e404c87d1541cccdc183ecea1fc70128f2861a9ce725f5d27370c');
  assert.equal(verdict.fallback, '6bc45fd45bfeb73d12a4ca17fc4ee053650e655e6881315178f767060560aef0');
  // the seat-entropy verifier in the browser: the published game, and one seed changed
  const seats = await page.evaluate(async (gid) => {
    const m = await import('/js/anqi-verify.js');
    const a = (await (await fetch(`/api/games/${gid}`)).json()).status.anqi;
    const args = { gameId: gid, serverHash: a.server_hash, serverSeed: a.server_seed, seeds: a.seeds, layout: a.layout, saltHex: a.salt };
    const ok = await m.verifySeats(args);
    const fallback = await m.verifySeats(args, { fallback: true });
    const other = await m.verifySeats({ ...args, seeds: [a.seeds[1], a.seeds[0], a.seeds[2]] });
    return { ok: ok.ok, fallback: fallback.ok, other: other.ok, otherLayout: other.layout };
  }, id);
  assert.deepEqual(seats, { ok: true, fallback: true, other: false, otherLayout: false });
  assert.deepEqual(errors, []);
});

test('the rules page has a 三国暗棋 article, in English and Chinese, with diagrams on the anqi board', { timeout: 120000 }, async () => {
  const errors = [];
  for (const [lang, title] of [['en-US', /hidden-piece chess/], ['zh-CN', /三国暗棋规则/]]) {
    const { page } = await newPage(browser, { lang }, errors);
    await page.goto(`${server.url}/#/rules/anqi-fair`);
    await page.waitForSelector('#rules-anqi');
    assert.match(await page.locator('#rules-anqi h1').innerText(), title);
    assert.equal(await page.locator('#rules-anqi section[data-rule]').count(), 6);
    assert.match(await page.getAttribute('#rule-anqi-fair', 'class'), /cited/);
    assert.equal(await page.locator('#rules-anqi .rule-diagram svg.mini[data-variant="anqi"]').count(), 3);
    // the start: 32 blank discs; the example line: three face-up pieces with team rims
    assert.equal(await page.locator('#rule-anqi-board .anqi-piece.down').count(), 32);
    assert.equal(await page.locator('#rule-anqi-flips .anqi-piece:not(.down)').count(), 3);
    assert.equal(await page.locator('#rule-anqi-flips .anqi-piece.team-2').count(), 1);
    // the cannon on a1: four moves up file a and the capture over the face-down screen
    assert.equal(await page.locator('#rule-anqi-moves [data-dest]').count(), 5);
    assert.equal(await page.locator('#rule-anqi-moves [data-dest="f1"]').count(), 1);
    await page.locator('#rule-anqi-moves').screenshot({ path: new URL(`../test-artifacts/rules-anqi-cannon-${lang}.png`, import.meta.url).pathname });
  }
  assert.deepEqual(errors, []);
});

test('a seat placed without a seed sends it from the game page; the full table deals when its wait is over', { timeout: 120000 }, async () => {
  const errors = [];
  const { page } = await newPage(browser, { lang: 'en-US' }, errors);
  await page.goto(server.url + '/');
  await page.waitForSelector('#create-form');
  // This page's guest posts an open seek and two other guests take it: the server seats the three
  // (as a tournament's table or quick pairing does), so none sent a seed with a join.
  const { id, seat } = await page.evaluate(async () => {
    const post = async (path, body, token) => {
      const res = await fetch(path, { method: 'POST', headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) }, body: JSON.stringify(body) });
      if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
      return res.json();
    };
    const me = JSON.parse(localStorage.getItem('sanguo.session'));
    const seek = await post('/api/seeks', { variant: 'anqi', time_control: { base_ms: 600000, increment_ms: 5000 } }, me.token);
    let matched;
    for (let i = 0; i < 2; i++) {
      const s = await post('/api/sessions', {});
      matched = await post(`/api/seeks/${seek.seek.id}/join`, {}, s.token);
    }
    const g = await (await fetch(`/api/games/${matched.game}`)).json();
    return { id: matched.game, seat: g.seats.findIndex((x) => x && x.player === me.player) };
  });
  assert.ok(seat >= 0, 'this page sits at the table');
  await page.goto(`${server.url}/#/g/${id}`);
  // the full table waits; this page sends its seed at once, the others never do
  const flags = ['0', '0', '0'];
  flags[seat] = '1';
  await page.waitForSelector('#game[data-phase="open"][data-role="player"] #anqi-seeding', { timeout: 30000 });
  await page.waitForSelector(`#anqi-seeds[data-seeds="${flags.join('')}"]`, { timeout: 30000 });
  const mine = await page.evaluate((gid) => localStorage.getItem(`sanguo.anqi.seed.${gid}`), id);
  assert.equal(await page.getAttribute('#anqi-my-seed', 'data-seed'), mine);
  await page.waitForSelector('#game[data-phase="live"]', { timeout: 30000 });
  const snap = await page.evaluate(async (gid) => (await fetch(`/api/games/${gid}`)).json(), id);
  const expected = [null, null, null];
  expected[seat] = mine;
  assert.deepEqual(snap.status.anqi.seeds, expected);
  assert.match(snap.status.anqi.commitment, /^[0-9a-f]{64}$/);
  assert.deepEqual(errors, []);
});
