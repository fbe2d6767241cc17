// The board SVG draws the 184 points at the coordinates of shared/board/points.tsv,
// rotated so that the viewer's side is at the bottom; the figure has the fans'
// 15 arcs and the 18 dashed palace diagonals; the UI speaks Chinese and English.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startServer, launchBrowser, newPage, shot, SHARED } from './helpers.mjs';

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

const tsv = readFileSync(join(SHARED, 'board', 'points.tsv'), 'utf8')
  .trim()
  .split('\n')
  .map((l) => l.split('\t'))
  .map(([i, name, x, y]) => ({ index: Number(i), name, x: Number(x), y: Number(y) }));

async function newGame() {
  const s = await (await fetch(`${server.url}/api/sessions`, { method: 'POST' })).json();
  const r = await fetch(`${server.url}/api/games`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${s.token}` },
    body: JSON.stringify({ public: false }),
  });
  assert.equal(r.status, 201);
  return (await r.json()).id;
}

async function checkPoints(page, view) {
  const svg = page.locator('#board');
  assert.equal(await svg.getAttribute('data-view'), view);
  const rot = (Number(await svg.getAttribute('data-rotation')) * Math.PI) / 180;
  const scale = Number(await svg.getAttribute('data-scale'));
  const drawn = await page.$$eval('#board circle[data-point]', (els) =>
    els.map((e) => ({ name: e.dataset.point, index: Number(e.dataset.index), x: Number(e.dataset.x), y: Number(e.dataset.y), cx: Number(e.getAttribute('cx')), cy: Number(e.getAttribute('cy')) })),
  );
  assert.equal(drawn.length, 184);
  assert.equal(new Set(drawn.map((d) => d.name)).size, 184);
  const byName = new Map(drawn.map((d) => [d.name, d]));
  for (const p of tsv) {
    const d = byName.get(p.name);
    assert.ok(d, `point ${p.name} drawn`);
    assert.equal(d.index, p.index, p.name);
    assert.ok(Math.abs(d.x - p.x) < 1e-6 && Math.abs(d.y - p.y) < 1e-6, `${p.name}: (${d.x}, ${d.y}) vs (${p.x}, ${p.y})`);
    // where it is drawn: rotated by the view, y pointing down, to 0.001 of the SVG's units
    const ex = (p.x * Math.cos(rot) - p.y * Math.sin(rot)) * scale;
    const ey = -(p.x * Math.sin(rot) + p.y * Math.cos(rot)) * scale;
    assert.ok(Math.abs(d.cx - ex) < 0.002 && Math.abs(d.cy - ey) < 0.002, `${p.name} at (${d.cx}, ${d.cy}), expected (${ex}, ${ey})`);
  }
  // the viewer's own king's point is at the bottom: the largest y on screen among the kings
  const kingY = {};
  for (const s of ['W', 'B', 'Y']) kingY[s] = byName.get(`${s}52`).cy;
  assert.equal(Object.entries(kingY).sort((a, b) => b[1] - a[1])[0][0], view);
  // the figure: 15 arcs (five per fan), 18 dashed diagonals
  const d = await page.getAttribute('#board path.line:not(.dashed)', 'd');
  assert.equal((d.match(/A/g) || []).length, 15);
  const dashed = await page.getAttribute('#board path.line.dashed', 'd');
  assert.equal((dashed.match(/M/g) || []).length, 18);
  assert.equal(await page.locator('#board .centre').count(), 1);
}

test('the board draws all 184 points at the reference coordinates, from every seat', { timeout: 120000 }, async () => {
  const id = await newGame();
  const errors = [];
  // a spectator sees W's view
  const s = await newPage(browser, { lang: 'en-US' }, errors);
  await s.page.goto(`${server.url}/#/g/${id}`);
  await s.page.waitForSelector('#game[data-role="spectator"]');
  await checkPoints(s.page, 'W');
  // the initial position: 54 pieces with each side's own characters
  assert.equal(await s.page.locator('#board .piece').count(), 54);
  const chars = await s.page.$$eval('#board .piece', (els) => els.map((e) => `${e.dataset.piece}${e.dataset.at}:${e.textContent}`));
  for (const c of ['WKW52:魏', 'BKB52:蜀', 'YKY52:吴', 'WAW42:仕', 'BAB42:士', 'YAY42:侍', 'WEW32:相', 'BEB32:象', 'YEY32:丞', 'WPW15:兵', 'BPB15:卒', 'YPY15:丁', 'WZW73:子', 'WFW51:妃', 'BRB12:车', 'YNY22:马', 'WCW24:炮']) {
    assert.ok(chars.includes(c), c);
  }
  // colours as the seed says: white with black characters, black with white, yellow with red
  const colours = await s.page.evaluate(() =>
    Object.fromEntries(
      ['W', 'B', 'Y'].map((side) => {
        const g = document.querySelector(`#board .piece.side-${side}`);
        return [side, [getComputedStyle(g.querySelector('rect')).fill, getComputedStyle(g.querySelector('text')).fill]];
      }),
    ),
  );
  assert.deepEqual(colours.W, ['rgb(251, 251, 247)', 'rgb(17, 17, 17)']);
  assert.deepEqual(colours.B, ['rgb(29, 29, 29)', 'rgb(250, 250, 250)']);
  assert.deepEqual(colours.Y, ['rgb(242, 198, 31)', 'rgb(200, 20, 28)']);
  await shot(s.page, 'render-spectator-W.png');

  // players of B and Y (by invite link) see their own side at the bottom
  for (const side of ['B', 'Y']) {
    const p = await newPage(browser, { lang: 'zh-CN' }, errors);
    await p.page.goto(`${server.url}/#/g/${id}?seat=${side}`);
    await p.page.waitForSelector(`#game[data-role="player"][data-side="${side}"]`);
    await checkPoints(p.page, side);
    await shot(p.page, `render-seat-${side}.png`);
    // Chinese UI for a Chinese browser
    assert.match(await p.page.locator('#status-line').innerText(), /等待棋手入座/);
    await p.ctx.close();
  }
  assert.deepEqual(errors, []);
});

test('the lobby speaks the browser language and switches', async () => {
  const zh = await newPage(browser, { lang: 'zh-CN' });
  await zh.page.goto(server.url + '/');
  await zh.page.waitForSelector('#create-form');
  assert.match(await zh.page.locator('#lobby').innerText(), /新对局/);
  await zh.page.click('#lang-toggle');
  await zh.page.waitForSelector('#lobby :text("New game")');
  // the choice sticks across reloads
  await zh.page.reload();
  await zh.page.waitForSelector('#lobby :text("New game")');
  const en = await newPage(browser, { lang: 'en-US' });
  await en.page.goto(server.url + '/');
  await en.page.waitForSelector('#lobby :text("Open games")');
  // the sound switch
  const before = await en.page.locator('#sound-toggle').innerText();
  await en.page.click('#sound-toggle');
  assert.notEqual(await en.page.locator('#sound-toggle').innerText(), before);
  await zh.ctx.close();
  await en.ctx.close();
});

test('the lobby offers the game systems the server names, shows each game\'s and filters by it', async () => {
  const { page, ctx } = await newPage(browser, { lang: 'en-US' });
  const variants = await (await fetch(`${server.url}/api/variants`)).json();
  assert.ok(variants.some((v) => v.key === 'sanguo' && v.playable), JSON.stringify(variants));
  await page.goto(server.url + '/');
  await page.waitForSelector('#create-form');
  await page.waitForFunction((n) => document.querySelectorAll('#variant option').length === n, variants.length);
  for (const v of variants) {
    const disabled = await page.locator(`#variant option[value="${v.key}"]`).isDisabled();
    assert.equal(disabled, !v.playable, `${v.key} offered only when playable`);
  }
  await page.selectOption('#variant', 'sanguo');
  await page.click('#create-btn');
  await page.waitForSelector('#game[data-phase="open"]');
  const id = await page.getAttribute('#game', 'data-game');
  const snap = await (await fetch(`${server.url}/api/games/${id}`)).json();
  assert.equal(snap.settings.variant, 'sanguo');
  const other = await newPage(browser, { lang: 'zh-CN' });
  await other.page.goto(server.url + '/');
  const row = `#open-games tr[data-game="${id}"]`;
  await other.page.waitForSelector(row);
  assert.match(await other.page.locator(`${row} .variant-name`).innerText(), /三国象棋/);
  await other.page.selectOption('#variant-filter', 'sanguo');
  await other.page.waitForSelector(row);
  const keys = await other.page.locator('#open-games .variant-name').evaluateAll((els) => els.map((e) => e.dataset.variant));
  assert.ok(keys.length && keys.every((k) => k === 'sanguo'), keys.join());
  await other.ctx.close();
  await ctx.close();
});

test('the client is served from the binary at /', async () => {
  const r = await fetch(server.url + '/');
  assert.equal(r.status, 200);
  assert.match(r.headers.get('content-type'), /text\/html/);
  const js = await fetch(server.url + '/js/board.js');
  assert.match(js.headers.get('content-type'), /javascript/);
  const miss = await fetch(server.url + '/api/nope');
  assert.equal(miss.status, 404);
  const etag = js.headers.get('etag');
  const again = await fetch(server.url + '/js/board.js', { headers: { 'If-None-Match': etag } });
  assert.equal(again.status, 304);
});

test('custom time control from the lobby: 读秒 and 步时 are shown on the clocks', async () => {
  const { page, ctx } = await newPage(browser, { lang: 'en-US' });
  await page.goto(server.url + '/');
  await page.waitForSelector('#create-form');
  await page.selectOption('#preset', 'custom');
  await page.fill('#c-base', '1');
  await page.fill('#c-inc', '0');
  await page.fill('#c-permove', '20');
  await page.fill('#c-byo-periods', '3');
  await page.fill('#c-byo-secs', '10');
  await page.check('input[name=direction][value=cw]');
  await page.check('input[name=visibility][value=private]');
  await page.selectOption('#my-seat', 'Y');
  await page.click('#create-btn');
  await page.waitForSelector('#game[data-phase="open"][data-side="Y"]');
  const id = await page.getAttribute('#game', 'data-game');
  const snap = await (await fetch(`${server.url}/api/games/${id}`)).json();
  assert.deepEqual(snap.settings.time_control, { base_ms: 60000, increment_ms: 0, per_move_ms: 20000, byoyomi: { periods: 3, period_ms: 10000 } });
  assert.equal(snap.settings.direction, 'cw');
  assert.equal(snap.settings.public, false);
  // private: not listed in the lobby
  const open = await (await fetch(`${server.url}/api/games?phase=open`)).json();
  assert.ok(!open.some((g) => g.id === id));
  const line = await page.locator('#role-line').innerText();
  assert.match(line, /读秒 3×10″/);
  assert.match(line, /步时 20″/);
  assert.match(await page.locator('.clock[data-side="W"] .extra').innerText(), /步时/);
  await ctx.close();
});

test('a live game in 读秒 and under 步时: the clock of the side to move ticks down the period and the move time', async () => {
  const sessions = [];
  for (let i = 0; i < 3; i++) sessions.push(await (await fetch(`${server.url}/api/sessions`, { method: 'POST' })).json());
  const auth = (s) => ({ 'Content-Type': 'application/json', Authorization: `Bearer ${s.token}` });
  const created = await fetch(`${server.url}/api/games`, {
    method: 'POST',
    headers: auth(sessions[0]),
    body: JSON.stringify({ time_control: { base_ms: 0, increment_ms: 0, per_move_ms: 50000, byoyomi: { periods: 3, period_ms: 30000 } } }),
  });
  assert.equal(created.status, 201);
  const id = (await created.json()).id;
  for (const [i, side] of ['W', 'B', 'Y'].entries()) {
    const r = await fetch(`${server.url}/api/games/${id}/join`, { method: 'POST', headers: auth(sessions[i]), body: JSON.stringify({ side }) });
    assert.equal(r.status, 200);
  }
  const { page, ctx } = await newPage(browser, { lang: 'zh-CN' });
  await page.goto(`${server.url}/#/g/${id}`);
  await page.waitForSelector('#game[data-phase="live"][data-role="spectator"]');
  const extra = page.locator('.clock[data-side="W"] .extra');
  await page.waitForFunction(() => /读秒 3/.test(document.querySelector('.clock[data-side="W"] .extra').textContent));
  assert.match(await extra.innerText(), /步时/);
  const read = async () => {
    const [m, s] = (await page.locator('.clock[data-side="W"] .time').innerText()).split(':').map(Number);
    return m * 60 + s;
  };
  const a = await read();
  assert.ok(a <= 30 && a >= 20, `a byo-yomi period of 30 s: ${a}`);
  await page.waitForTimeout(2100);
  assert.ok((await read()) < a, 'the period ticks');
  await page.locator('#board').screenshot({ path: new URL('../test-artifacts/byoyomi-spectator-zh.png', import.meta.url).pathname });
  await page.locator('.panel').screenshot({ path: new URL('../test-artifacts/byoyomi-panel-zh.png', import.meta.url).pathname });
  await ctx.close();
});

test('读秒 in its second period: the clock shows the periods and the time the server counts', async () => {
  const sessions = [];
  for (let i = 0; i < 3; i++) sessions.push(await (await fetch(`${server.url}/api/sessions`, { method: 'POST' })).json());
  const auth = (s) => ({ 'Content-Type': 'application/json', Authorization: `Bearer ${s.token}` });
  const created = await fetch(`${server.url}/api/games`, {
    method: 'POST',
    headers: auth(sessions[0]),
    body: JSON.stringify({ public: false, time_control: { base_ms: 0, increment_ms: 0, byoyomi: { periods: 3, period_ms: 5000 } } }), // 5 s: the shortest period the server allows
  });
  assert.equal(created.status, 201);
  const id = (await created.json()).id;
  for (const [i, side] of ['W', 'B', 'Y'].entries()) {
    await fetch(`${server.url}/api/games/${id}/join`, { method: 'POST', headers: auth(sessions[i]), body: JSON.stringify({ side }) });
  }
  const { page, ctx } = await newPage(browser, { lang: 'en-US' });
  await page.goto(`${server.url}/#/g/${id}`);
  await page.waitForSelector('#game[data-phase="live"][data-role="spectator"]');
  // the page got its snapshot in W's first period; now W is in the second
  await page.waitForFunction(() => /读秒 2×/.test(document.querySelector('.clock[data-side="W"] .extra').textContent), null, { timeout: 9000 });
  await page.waitForTimeout(500);
  const shown = Number(await page.locator('.clock[data-side="W"] .time').innerText());
  const w = (await (await fetch(`${server.url}/api/games/${id}`)).json()).status.clocks[0];
  assert.equal(w.periods_left, 2, 'the server: W is in its second of three periods');
  assert.match(await page.locator('.clock[data-side="W"] .extra').innerText(), /读秒 2×/);
  assert.ok(Math.abs(shown * 1000 - w.period_left_ms) < 600, `shown ${shown} s, the server ${w.period_left_ms} ms`);
  assert.ok(shown > 0, 'not stuck at 0.0');
  await ctx.close();
});

test('a wrong game link says there is no such game and leads back to the lobby', async () => {
  const { page, ctx } = await newPage(browser, { lang: 'en-US' });
  await page.goto(`${server.url}/#/g/nosuchgame42`);
  await page.waitForSelector('#no-such-game');
  assert.match(await page.locator('#no-such-game').innerText(), /No such game/);
  assert.equal(await page.isVisible('#banner'), false, 'no endless “reconnecting…”');
  await page.click('#back-to-lobby');
  await page.waitForSelector('#create-form');
  await ctx.close();
});

test('server refusals are told in a translated sentence, never the server’s own words', async () => {
  for (const [lang, re] of [['en-US', /This clock is not allowed: main time at most 7 days/], ['zh-CN', /不允许这样的用时/]]) {
    const { page, ctx } = await newPage(browser, { lang });
    await page.goto(server.url + '/');
    await page.waitForSelector('#create-form');
    await page.selectOption('#preset', 'custom');
    await page.fill('#c-base', '20000'); // minutes: more than 7 days
    await page.click('#create-btn');
    await page.waitForSelector('#create-error:not([hidden])');
    const text = await page.locator('#create-error').innerText();
    assert.match(text, re);
    assert.doesNotMatch(text, /base_ms|deserialize|JSON/);
    // a fraction of a minute is a clock like any other: 20 s + 1 s
    await page.fill('#c-base', '0.33333');
    await page.fill('#c-inc', '1');
    await page.click('#create-btn');
    await page.waitForSelector('#game[data-phase="open"]');
    const id = await page.getAttribute('#game', 'data-game');
    const snap = await (await fetch(`${server.url}/api/games/${id}`)).json();
    assert.deepEqual([snap.settings.time_control.base_ms, snap.settings.time_control.increment_ms], [20000, 1000]);
    assert.match(await page.locator('#role-line').innerText(), /20″ \+1″/);
    await ctx.close();
  }
});

test('the rules page, in English and Chinese, with diagrams drawn by the board code', async () => {
  for (const [lang, title] of [['en-US', /The rules of Three Kingdoms chess/], ['zh-CN', /三国象棋规则/]]) {
    const { page, ctx } = await newPage(browser, { lang });
    await page.goto(`${server.url}/#/rules/retaliation`);
    await page.waitForSelector('#rules');
    assert.match(await page.locator('#rules h1').innerText(), title);
    for (const s of ['board', 'regions', 'king', 'horse', 'cannon', 'soldier', 'retaliation', 'check', 'sudden-death', 'phases', 'counters']) {
      assert.equal(await page.locator(`#rule-${s}`).count(), 1, s);
    }
    assert.match(await page.getAttribute('#rule-retaliation', 'class'), /cited/);
    // nine diagrams, each the real board (184 points) with the piece's destinations marked
    assert.equal(await page.locator('#rules .rule-diagram svg.mini').count(), 9);
    // the second game system's article follows, with its own seven diagrams on its 225-point board
    // (board, pieces, soldier, cannon, alliance, 被将先走 and 兵力收编)
    assert.equal(await page.locator('#rules-yanyi .rule-diagram svg.mini[data-variant="yanyi"]').count(), 7);
    assert.equal(await page.locator('[data-diagram="horse"] [data-point]').count(), 184);
    assert.equal(await page.locator('[data-diagram="horse"] [data-dest]').count(), 6);
    assert.equal(await page.locator('[data-diagram="cannon"] [data-dest="B33"].capture').count(), 1);
    await page.locator('#rule-cannon').screenshot({ path: new URL(`../test-artifacts/rules-cannon-${lang}.png`, import.meta.url).pathname });
    await ctx.close();
  }
});

test('a phone: the board fits the screen on its side and upright, the header stays one line, zoomed points are a finger apart', async () => {
  const id = await newGame();
  for (const viewport of [{ width: 844, height: 390 }, { width: 390, height: 844 }]) {
    const { page, ctx } = await newPage(browser, { lang: 'zh-CN', viewport, isMobile: true, hasTouch: true });
    await page.goto(`${server.url}/#/g/${id}`);
    await page.waitForSelector('#game[data-role="spectator"]');
    const box = await page.locator('#board').boundingBox();
    assert.ok(box.x >= 0 && box.y >= 0 && box.x + box.width <= viewport.width + 1 && box.y + box.height <= viewport.height + 1, `${viewport.width}×${viewport.height}: board at ${JSON.stringify(box)}`);
    assert.ok(box.width > viewport.width * 0.4, 'not a stamp');
    const brand = await page.locator('#home').evaluate((e) => e.getClientRects().length === 1 && e.offsetHeight < 40);
    assert.ok(brand, '三国象棋 on one line');
    // zoomed: neighbouring points (one line spacing) at least 32 px apart
    await page.locator('#zoom-btn').tap();
    const a = await page.locator('#board [data-point="W52"]').boundingBox();
    const b = await page.locator('#board [data-point="W53"]').boundingBox();
    const gap = Math.hypot(a.x - b.x, a.y - b.y);
    assert.ok(gap >= 32, `points ${gap.toFixed(1)} px apart`);
    const zoom = await page.locator('#zoom-btn').boundingBox();
    assert.ok(zoom.height >= 32, 'the button itself is a tap target');
    await page.screenshot({ path: new URL(`../test-artifacts/phone-${viewport.width}x${viewport.height}.png`, import.meta.url).pathname });
    await ctx.close();
  }
});
