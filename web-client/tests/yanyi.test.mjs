// 三国演弈棋 in the browser: three players open the 225-point board from the
// lobby and the invite links, each sees its own camp at the bottom in its
// colour, and they move by clicking. After 吴 q12-o13, 魏 i14-h14 and 蜀's
// first cannon move f3-i3 (check on 魏 over 蜀's i4 soldier, RULES-YANYI §11),
// 魏 is in check and moves before 吴: every page says so (被将先走). A refused
// click is explained in this game's words; the rules page has its section.

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

const state = (page) => page.evaluate(() => window.__sanguo && window.__sanguo.state && window.__sanguo.state.game && JSON.parse(JSON.stringify(window.__sanguo.state.game)));

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

test('three players play 三国演弈棋 by clicking; the checked 魏 moves first and every page says so', { timeout: 120000 }, async () => {
  const errors = [];
  const wu = await newPage(browser, { lang: 'en-US' }, errors);
  await wu.page.goto(server.url + '/');
  await wu.page.waitForSelector('#create-form');
  await wu.page.selectOption('#variant', 'yanyi');
  // the seats are named in this game's words: W is 吴
  assert.match(await wu.page.locator('#my-seat option[value="W"]').innerText(), /Wu/);
  await wu.page.selectOption('#my-seat', 'W');
  await wu.page.click('#create-btn');
  await wu.page.waitForSelector('#game[data-variant="yanyi"][data-side="W"]', { timeout: 15000 });
  const id = await wu.page.getAttribute('#game', 'data-game');
  const wei = await newPage(browser, { lang: 'en-US' }, errors);
  const shu = await newPage(browser, { lang: 'zh-CN' }, errors);
  await wei.page.goto(`${server.url}/#/g/${id}?seat=B`);
  await shu.page.goto(`${server.url}/#/g/${id}?seat=Y`);
  const pages = [wu.page, wei.page, shu.page];
  for (const p of pages) await p.waitForSelector('#game[data-phase="live"][data-ply="0"]', { timeout: 15000 });

  // The board: 225 points, each seat's camp at the bottom, the four owners' colours.
  assert.equal(await wu.page.locator('#board [data-point]').count(), 225);
  assert.equal(await wu.page.getAttribute('#board', 'data-view'), 'G');
  assert.equal(await wei.page.getAttribute('#board', 'data-view'), 'B');
  assert.equal(await shu.page.getAttribute('#board', 'data-view'), 'R');
  assert.equal(await wu.page.locator('#board .piece.side-G').count(), 16);
  assert.equal(await wu.page.locator('#board .piece.side-R').count(), 16);
  assert.equal(await wu.page.locator('#board .piece.side-Y').count(), 5, 'the 汉 force');
  assert.equal(await wu.page.locator('#board [data-piece="YK"][data-at="a9"]').count(), 1);
  assert.match(await wu.page.locator('#han-note').innerText(), /汉 force/);
  assert.match(await wu.page.locator('.clock[data-side="B"]').innerText(), /Wei/);
  assert.match(await shu.page.locator('.clock[data-side="Y"]').innerText(), /蜀/);

  // Out of turn: 魏 clicks its own piece before 吴 moved.
  const [ix, iy] = await pointXY(wei.page, 'i14');
  await wei.page.mouse.click(ix, iy);
  await wei.page.waitForSelector('#refusal-note[data-code="not_your_turn"]', { timeout: 5000 });
  assert.match(await wei.page.locator('#refusal-note').innerText(), /Wu/);
  // 吴 tries its cannon out of its camp on its first move: refused in this game's words.
  const [ox, oy] = await pointXY(wu.page, 'o6');
  await wu.page.mouse.click(ox, oy);
  const [lx, ly] = await pointXY(wu.page, 'l6');
  await wu.page.mouse.click(lx, ly);
  await wu.page.waitForSelector('#refusal-note[data-code="cannon_first_move"]', { timeout: 5000 });
  assert.match(await wu.page.locator('#refusal-note').innerText(), /first move/);

  // 吴, 魏, 蜀 move by clicking.
  await clickMove(wu.page, 'q12-o13');
  await wei.page.waitForSelector('#game[data-ply="1"][data-turn="B"]', { timeout: 10000 });
  await clickMove(wei.page, 'i14-h14');
  await shu.page.waitForSelector('#game[data-ply="2"][data-turn="Y"]', { timeout: 10000 });
  await clickMove(shu.page, 'f3-i3');
  // 魏 is in check and moves first: 吴 is skipped.
  for (const p of pages) await p.waitForSelector('#game[data-ply="3"][data-turn="B"]', { timeout: 10000 });
  const st = await state(wu.page);
  assert.equal(st.status.yanyi.turn_reason, 'check');
  assert.deepEqual(st.status.in_check, ['B']);
  assert.match(await wu.page.locator('#turn-reason-note').innerText(), /Wei is in check and moves first/);
  assert.match(await wu.page.locator('#status-line').innerText(), /Wei is in check and moves first/);
  assert.match(await wu.page.locator('#skipped-note').innerText(), /Wu is skipped/);
  assert.match(await wei.page.locator('#turn-reason-note').innerText(), /You are in check and move first/);
  assert.match(await shu.page.locator('#turn-reason-note').innerText(), /魏被将，先走/);
  // the king in check is marked on every board
  assert.equal(await wu.page.locator('#board .mark.in-check').count(), 1);
  await shot(wei.page, 'yanyi-check-wei.png');

  // 魏 blocks with its advisor (h17-i16: two screens now); the order goes on from 魏: 蜀 moves again (仍由红走).
  assert.ok(st.status.legal_moves.includes('h17-i16'));
  await clickMove(wei.page, 'h17-i16');
  for (const p of pages) await p.waitForSelector('#game[data-ply="4"][data-turn="Y"]', { timeout: 10000 });
  const after4 = await state(wu.page);
  assert.equal(after4.status.yanyi.turn_reason, 'cycle');
  assert.deepEqual(after4.status.in_check || [], []);
  // each opponent's last move is marked on 吴's board, tinted by its colour
  assert.ok((await wu.page.locator('#board .mark.last-to.by-B').count()) >= 1);
  assert.ok((await wu.page.locator('#board .mark.last-to.by-R').count()) >= 1);
  await shot(wu.page, 'yanyi-wu.png');
  assert.deepEqual(errors, []);
  for (const x of [wu, wei, shu]) await x.ctx.close();
});

test('蜀’s horse on 魏’s 结盟点 allies 蜀 and 魏 by clicking; the 汉 force goes to 吴, shown on the board and by the clocks', { timeout: 180000 }, async () => {
  const errors = [];
  const wu = await newPage(browser, { lang: 'en-US' }, errors);
  await wu.page.goto(server.url + '/');
  await wu.page.waitForSelector('#create-form');
  await wu.page.selectOption('#variant', 'yanyi');
  await wu.page.selectOption('#my-seat', 'W');
  await wu.page.click('#create-btn');
  await wu.page.waitForSelector('#game[data-variant="yanyi"][data-side="W"]', { timeout: 15000 });
  const id = await wu.page.getAttribute('#game', 'data-game');
  const wei = await newPage(browser, { lang: 'en-US' }, errors);
  const shu = await newPage(browser, { lang: 'en-US' }, errors);
  await wei.page.goto(`${server.url}/#/g/${id}?seat=B`);
  await shu.page.goto(`${server.url}/#/g/${id}?seat=Y`);
  const bySeat = { W: wu.page, B: wei.page, Y: shu.page };
  for (const p of Object.values(bySeat)) await p.waitForSelector('#game[data-phase="live"][data-ply="0"]', { timeout: 15000 });
  // 吴 and 魏 step their kings back and forth; 蜀's horse goes f1 g3 f5 e7 d5 c7 a8 (魏's point).
  const line = [];
  const horse = ['f1-g3', 'g3-f5', 'f5-e7', 'e7-d5', 'd5-c7', 'c7-a8'];
  horse.forEach((mv, i) => line.push(['W', i % 2 ? 'p9-q9' : 'q9-p9'], ['B', i % 2 ? 'i16-i17' : 'i17-i16'], ['Y', mv]));
  for (const [k, [seat, mv]] of line.entries()) {
    const page = bySeat[seat];
    await page.waitForSelector(`#game[data-ply="${k}"][data-turn="${seat}"]`, { timeout: 15000 });
    await clickMove(page, mv);
  }
  for (const p of Object.values(bySeat)) await p.waitForSelector(`#game[data-ply="${line.length}"]`, { timeout: 15000 });
  const st = await state(wu.page);
  assert.deepEqual(st.status.yanyi.alliance, ['B', 'Y']);
  assert.deepEqual(st.status.yanyi.han, { state: 'allied_to', holder: 'W' });
  assert.match(st.status.position, / G BR -$/);
  for (const p of Object.values(bySeat)) {
    assert.match(await p.locator('#alliance-note').innerText(), /Wei and Shu/);
    assert.match(await p.locator('#han-note').innerText(), /belongs to Wu/);
    // beside the clocks: the allies' 盟, the holder's 汉
    assert.equal(await p.locator('.clock[data-side="B"] .clock-badge.allied').count(), 1);
    assert.equal(await p.locator('.clock[data-side="Y"] .clock-badge.allied').count(), 1);
    assert.equal(await p.locator('.clock[data-side="W"] .clock-badge.han').count(), 1);
    // on the board: the emperor gone, his chariots and cannon 吴's, framed in yellow
    assert.equal(await p.locator('#board [data-piece="YK"]').count(), 0);
    assert.equal(await p.locator('#board .piece.side-G.held[data-origin="Y"]').count(), 4);
    assert.equal(await p.locator('#board [data-piece="RN"][data-at="a8"]').count(), 1);
  }
  // the record line arrived as a note on the pages that saw it happen
  assert.match(await wei.page.locator('#notes').innerText(), /Shu and Wei are allied|Wei and Shu are allied/);
  await shot(wu.page, 'yanyi-alliance-wu.png');
  assert.deepEqual(errors, []);
  for (const x of [wu, wei, shu]) await x.ctx.close();
});

test('the rules page has a section on 三国演弈棋 with diagrams on its board', { timeout: 60000 }, async () => {
  const errors = [];
  for (const [lang, title] of [['en-US', /Yanyi/], ['zh-CN', /三国演弈棋规则/]]) {
    const { page, ctx } = await newPage(browser, { lang }, errors);
    await page.goto(`${server.url}/#/rules/yanyi-turns`);
    await page.waitForSelector('#rules-yanyi');
    assert.match(await page.locator('#rules-yanyi h1').innerText(), title);
    assert.ok(await page.locator('#rule-yanyi-turns.cited').count());
    // the horse diagram: e4's four moves beside the notch, drawn on the 225-point board
    const d = page.locator('[data-diagram="yanyi-pieces"] svg');
    assert.equal(await d.locator('[data-point]').count(), 225);
    assert.equal(await d.locator('[data-dest]').count(), 4);
    await ctx.close();
  }
  assert.deepEqual(errors, []);
});
