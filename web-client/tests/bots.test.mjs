// Bots from the browser: the lobby fills seats with bots at creation, the
// game page and the lobby show them as bots, and they answer a person's
// moves; the creator gives a free seat to a bot from the game page.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, launchBrowser, newPage } from './helpers.mjs';

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

const state = (page) => page.evaluate(() => window.__sanguo && window.__sanguo.state && window.__sanguo.state.game && { ...window.__sanguo.state.game });

async function pointXY(page, name) {
  const box = await page.locator(`#board [data-point="${name}"]`).boundingBox();
  return [box.x + box.width / 2, box.y + box.height / 2];
}

async function clickMove(page, mv) {
  const [from, to] = mv.split('-');
  const [fx, fy] = await pointXY(page, from);
  await page.mouse.click(fx, fy);
  await page.waitForSelector(`#board [data-dest="${to}"]`, { timeout: 5000 });
  const [tx, ty] = await pointXY(page, to);
  await page.mouse.click(tx, ty);
}

test('a person against two bots made in the lobby: the bots are shown and answer each move', { timeout: 120000 }, async () => {
  const errors = [];
  const { page, ctx } = await newPage(browser, { lang: 'en-US' }, errors);
  await page.goto(server.url + '/');
  await page.waitForSelector('#create-form');
  await page.selectOption('#bot-B', '1');
  await page.selectOption('#bot-Y', '2');
  await page.selectOption('#my-seat', 'W');
  await page.click('#create-btn');
  // W joins the last free seat: the game starts at once.
  await page.waitForSelector('#game[data-phase="live"][data-side="W"]', { timeout: 15000 });
  const id = await page.getAttribute('#game', 'data-game');
  assert.match(await page.locator('.clock[data-side="B"] .nm').innerText(), /Bot \(level 1\)/);
  assert.match(await page.locator('.clock[data-side="Y"] .nm').innerText(), /Bot \(level 2\)/);
  assert.equal(await page.getAttribute('.clock[data-side="Y"] .nm', 'data-bot'), '2');
  for (let round = 0; round < 3; round++) {
    const st = await state(page);
    assert.equal(st.status.turn, 'W');
    const ply = st.status.ply;
    await clickMove(page, st.status.legal_moves[(ply * 7 + 3) % st.status.legal_moves.length]);
    // both bots answer: W's turn again, three plies on
    await page.waitForSelector(`#game[data-ply="${ply + 3}"][data-turn="W"]`, { timeout: 20000 });
  }
  // The lobby lists the game with its bots.
  await page.goto(server.url + '/');
  await page.waitForSelector(`#live-games tr[data-game="${id}"] .seat-bot[data-bot="2"]`, { timeout: 10000 });
  assert.match(await page.locator(`#live-games tr[data-game="${id}"]`).innerText(), /Bot \(level 1\)/);
  assert.deepEqual(errors, []);
  await ctx.close();
});

test("the creator gives a free seat to a bot from the game page; others cannot", { timeout: 60000 }, async () => {
  const errors = [];
  const { page, ctx } = await newPage(browser, { lang: 'zh-CN' }, errors);
  await page.goto(server.url + '/');
  await page.waitForSelector('#create-form');
  await page.selectOption('#my-seat', 'B');
  await page.click('#create-btn');
  await page.waitForSelector('#game[data-phase="open"][data-side="B"]', { timeout: 15000 });
  const id = await page.getAttribute('#game', 'data-game');
  await page.selectOption('[data-bot-level="Y"]', '3');
  await page.click('[data-add-bot="Y"]');
  await page.waitForFunction(() => /电脑（3 级）/.test(document.querySelector('#invite').textContent), null, { timeout: 10000 });
  const snap = await (await fetch(`${server.url}/api/games/${id}`)).json();
  assert.equal(snap.seats[2].bot, 3);
  assert.equal(snap.seats[0], null);
  // Another browser (not the creator) is offered no bot button, and the API refuses it.
  const other = await newPage(browser, { lang: 'en-US' }, errors);
  await other.page.goto(`${server.url}/#/g/${id}`);
  await other.page.waitForSelector('#game[data-phase="open"]');
  assert.equal(await other.page.locator('[data-add-bot]').count(), 0);
  const s = await (await fetch(`${server.url}/api/sessions`, { method: 'POST' })).json();
  const r = await fetch(`${server.url}/api/games/${id}/bots`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${s.token}` },
    body: JSON.stringify({ side: 'W', level: 1 }),
  });
  assert.equal(r.status, 403);
  assert.equal((await r.json()).code, 'forbidden');
  assert.deepEqual(errors, []);
  await other.ctx.close();
  await ctx.close();
});

test('against two bots each one’s reply is marked, and the board shows point names on demand', { timeout: 120000 }, async () => {
  const errors = [];
  const { page, ctx } = await newPage(browser, { lang: 'en-US' }, errors);
  await page.goto(server.url + '/');
  await page.waitForSelector('#create-form');
  await page.selectOption('#bot-B', '1');
  await page.selectOption('#bot-Y', '1');
  await page.selectOption('#my-seat', 'W');
  await page.click('#create-btn');
  await page.waitForSelector('#game[data-phase="live"][data-side="W"]', { timeout: 15000 });
  const st = await state(page);
  await clickMove(page, st.status.legal_moves[3]);
  await page.waitForSelector('#game[data-ply="3"][data-turn="W"]', { timeout: 20000 });
  const after = await state(page);
  // the tab says it is W's move; each move was heard
  assert.match(await page.title(), /^● Your move/);
  const sounds = await page.evaluate(() => window.__sanguoSounds || []);
  assert.ok(sounds.length >= 3 && sounds.every((k) => ['move', 'capture', 'check'].includes(k)), sounds.join());
  // both replies, each with its side, not just the latest
  const marks = await page.$$eval('#board .mark.last-to', (ms) => ms.map((m) => m.getAttribute('data-by')));
  assert.deepEqual(marks.sort(), ['B', 'Y']);
  assert.equal(await page.locator('#board .mark.last-from[data-by="B"]').count(), 1);
  assert.equal(after.moves.length, 3);
  // the move list can be browsed without leaving the game
  const [from2] = after.moves[1].split('-');
  await page.click('#movelist .mv[data-ply="0"]');
  await page.waitForSelector('#game[data-browse="1"]');
  assert.equal(await page.locator(`#board .piece[data-at="${from2}"]`).count(), 1, 'B has not moved yet at move 1');
  assert.match(await page.locator('#browse-at').innerText(), /move 1/);
  await page.click('#browse-fwd');
  await page.waitForSelector('#game[data-browse="2"]');
  assert.equal(await page.locator(`#board .piece[data-at="${from2}"]`).count(), 0);
  await page.click('#browse-live');
  await page.waitForFunction(() => !document.querySelector('#game').dataset.browse);
  assert.equal(await page.locator('#browse-bar').isHidden(), true);
  // coordinates: every point's name, as the move list writes it
  assert.equal(await page.locator('#board [data-coord]').count(), 0);
  await page.click('#coords-btn');
  assert.equal(await page.locator('#board [data-coord]').count(), 184);
  assert.equal(await page.locator('#board [data-coord="W52"]').textContent(), 'W52');
  await page.reload();
  await page.waitForSelector('#game[data-phase="live"]');
  assert.equal(await page.locator('#board [data-coord]').count(), 184, 'remembered');
  await page.click('#coords-btn');
  assert.equal(await page.locator('#board [data-coord]').count(), 0);
  assert.deepEqual(errors, []);
  await ctx.close();
});
