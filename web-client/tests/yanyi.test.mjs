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
  // The legal moves reach the seat to move only (the client says hello with legal_moves: "own").
  assert.deepEqual(st.status.legal_moves, []);
  assert.ok((await state(wei.page)).status.legal_moves.includes('h17-i16'));
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
    assert.equal(await p.locator('#board .mark.allied').count(), 2);
  }
  // the record line arrived as a note on the pages that saw it happen
  assert.match(await wei.page.locator('#notes').innerText(), /Shu and Wei are allied|Wei and Shu are allied/);
  await shot(wu.page, 'yanyi-alliance-wu.png');
  assert.deepEqual(errors, []);
  for (const x of [wu, wei, shu]) await x.ctx.close();
});

// The shortest real line we found from the start to an absorption after an
// alliance (19 moves; a game cannot be set up from another position): 吴's
// horse heads for j15 (q12 o13 m12 l14), 魏's horse settles on i16 (l17 k15
// i16) where it shuts its own king in with the advisors, 蜀's horse runs to 魏's
// 结盟点 (f1 g3 f5 e7 d5 c7 a8) and allies 蜀 and 魏, handing the 汉 force to 吴;
// then 吴's horse l14-j15 checks i17: no piece of 魏 can take j15 and the king
// has no free point, so 魏 is mated at its turn and 吴, the last mover that
// attacks its king, absorbs (RULES-YANYI §8 rule 1); 蜀 moves next.
const ABSORPTION_LINE = [
  ['W', 'q12-o13'], ['B', 'l17-k15'], ['Y', 'f1-g3'],
  ['W', 'o13-m12'], ['B', 'k15-i16'], ['Y', 'g3-f5'],
  ['W', 'm12-l14'], ['B', 'e17-e16'], ['Y', 'f5-e7'],
  ['W', 'q9-p9'], ['B', 'e16-e17'], ['Y', 'e7-d5'],
  ['W', 'p9-q9'], ['B', 'e17-e16'], ['Y', 'd5-c7'],
  ['W', 'q9-p9'], ['B', 'e16-e17'], ['Y', 'c7-a8'],
  ['W', 'l14-j15'],
];

test('an alliance, then 魏 mated and absorbed by 吴, all by clicking; the replay steps through the 汉 force, the alliance and the absorption as live', { timeout: 240000 }, async () => {
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
  const shu = await newPage(browser, { lang: 'zh-CN' }, errors);
  await wei.page.goto(`${server.url}/#/g/${id}?seat=B`);
  await shu.page.goto(`${server.url}/#/g/${id}?seat=Y`);
  const bySeat = { W: wu.page, B: wei.page, Y: shu.page };
  const pages = Object.values(bySeat);
  for (const p of pages) await p.waitForSelector('#game[data-phase="live"][data-ply="0"]', { timeout: 15000 });
  const allied = ABSORPTION_LINE.length - 1;
  for (const [k, [seat, mv]] of ABSORPTION_LINE.entries()) {
    const page = bySeat[seat];
    await page.waitForSelector(`#game[data-ply="${k}"][data-turn="${seat}"]`, { timeout: 15000 });
    await clickMove(page, mv);
    if (k + 1 !== allied) continue;
    // the alliance: on the board (the emperor gone, his pieces 吴's) and beside the clocks
    for (const p of pages) await p.waitForSelector(`#game[data-ply="${allied}"][data-turn="W"]`, { timeout: 15000 });
    const st = await state(wu.page);
    assert.deepEqual(st.status.yanyi.alliance, ['B', 'Y']);
    assert.deepEqual(st.status.yanyi.han, { state: 'allied_to', holder: 'W' });
    for (const p of pages) {
      assert.equal(await p.locator('.clock[data-side="B"] .clock-badge.allied').count(), 1);
      assert.equal(await p.locator('.clock[data-side="Y"] .clock-badge.allied').count(), 1);
      assert.equal(await p.locator('.clock[data-side="W"] .clock-badge.han').count(), 1);
      assert.equal(await p.locator('#board [data-piece="YK"]').count(), 0);
      assert.equal(await p.locator('#board .piece.side-G.held[data-origin="Y"]').count(), 4);
      assert.equal(await p.locator('#alliance-note').count(), 1);
      // on the board: the allied kings ringed (盟)
      assert.equal(await p.locator('#board .mark.allied').count(), 2);
      assert.equal(await p.locator('#board .mark.allied[data-allied="B"]').count(), 1);
      assert.equal(await p.locator('#board .mark.allied[data-allied="R"]').count(), 1);
    }
    assert.match(await wu.page.locator('#alliance-note').innerText(), /Wei and Shu/);
    assert.match(await shu.page.locator('#alliance-note').innerText(), /魏与蜀/);
  }
  // 吴's l14-j15 mates 魏: 吴 absorbs, 蜀 moves next
  for (const p of pages) await p.waitForSelector(`#game[data-ply="${ABSORPTION_LINE.length}"][data-turn="Y"]`, { timeout: 15000 });
  const st = await state(wu.page);
  assert.deepEqual(st.status.live, ['W', 'Y']);
  assert.deepEqual(st.status.yanyi.absorptions, [{ absorbed: 'B', by: 'W' }]);
  assert.equal(st.status.yanyi.alliance ?? null, null, 'the first elimination ends the alliance');
  for (const p of pages) {
    // 魏's 15 pieces but its king are 吴's now, framed as once 魏's; 魏's king has left
    await p.waitForFunction(() => !document.querySelector('#board .piece.side-B'), null, { timeout: 10000 });
    assert.equal(await p.locator('#board .piece.side-G.held[data-origin="B"]').count(), 15);
    assert.equal(await p.locator('#board [data-piece="BK"]').count(), 0);
    // the seat's state: out, with why; the absorption note; the alliance badges gone
    assert.equal(await p.locator('.clock[data-side="B"].out').count(), 1);
    assert.equal(await p.locator('[data-eliminated="B"]').count(), 1);
    assert.equal(await p.locator('#absorbed-note').count(), 1);
    assert.equal(await p.locator('.clock-badge.allied').count(), 0);
    assert.equal(await p.locator('#alliance-note').count(), 0);
    assert.equal(await p.locator('#board .mark.allied').count(), 0);
  }
  assert.match(await wu.page.locator('[data-eliminated="B"]').innerText(), /mated/);
  assert.match(await wu.page.locator('#absorbed-note').innerText(), /Wu absorbed the pieces of Wei/);
  assert.match(await shu.page.locator('#absorbed-note').innerText(), /吴收编了魏的残兵/);
  // the record line arrived as a note on the pages that saw it happen
  assert.match(await wei.page.locator('#notes').innerText(), /Wu absorbs the pieces of Wei/);
  await shot(wu.page, 'yanyi-absorbed-wu.png');

  // The replay of the live record, then of the finished one (蜀 resigns): every step as live showed it.
  const checkReplay = async (page, finished) => {
    await page.goto(`${server.url}/#/r/${id}`);
    await page.waitForSelector('#replay[data-loaded="true"]');
    const total = ABSORPTION_LINE.length;
    await page.waitForSelector(`#replay[data-ply="${total}"]`);
    const seen = async (ply) => {
      await page.locator('#movelist .mv').nth(ply - 1).click();
      await page.waitForSelector(`#replay[data-ply="${ply}"]`);
    };
    // before the alliance: the static 汉 force, no alliance
    await seen(allied - 1);
    assert.equal(await page.locator('#board [data-piece="YK"][data-at="a9"]').count(), 1);
    assert.equal(await page.locator('#board .piece.side-Y').count(), 5);
    assert.equal(await page.locator('#replay-alliance').count(), 0);
    assert.match(await page.locator('#replay-han').innerText(), /stands still/);
    assert.equal(await page.getAttribute('#replay', 'data-live'), 'WBY');
    // the alliance's move: the emperor gone, the 汉 force 吴's, the alliance by the seats
    await seen(allied);
    assert.equal(await page.locator('#board [data-piece="YK"]').count(), 0);
    assert.equal(await page.locator('#board .piece.side-G.held[data-origin="Y"]').count(), 4);
    assert.match(await page.locator('#replay-alliance').innerText(), /Wei and Shu/);
    assert.match(await page.locator('#replay-han').innerText(), /belongs to Wu/);
    assert.equal(await page.locator('.replay-seat[data-side="B"] .clock-badge.allied').count(), 1);
    assert.equal(await page.locator('.replay-seat[data-side="Y"] .clock-badge.allied').count(), 1);
    assert.equal(await page.locator('.replay-seat[data-side="W"] .clock-badge.han').count(), 1);
    assert.equal(await page.locator('#board .mark.allied').count(), 2);
    // the absorption
    await seen(total);
    assert.equal(await page.locator('#board .piece.side-B').count(), 0);
    assert.equal(await page.locator('#board .piece.side-G.held[data-origin="B"]').count(), 15);
    assert.match(await page.locator('#replay-absorbed').innerText(), /Wu absorbed the pieces of Wei/);
    assert.equal(await page.locator('#replay-alliance').count(), 0);
    assert.equal(await page.locator('#board .mark.allied').count(), 0);
    assert.equal(await page.locator('.replay-seat[data-side="B"][data-out="true"]').count(), 1);
    assert.equal(await page.getAttribute('#replay', 'data-live'), finished ? 'W' : 'WY');
    // and back: stepping back undoes it
    await page.click('#rp-back');
    await page.waitForSelector(`#replay[data-ply="${total - 1}"]`);
    assert.equal(await page.locator('#board .piece.side-B').count(), 16);
    assert.equal(await page.locator('#replay-absorbed').count(), 0);
    assert.equal(await page.locator('.replay-seat[data-out="true"]').count(), 0);
  };
  const live = await newPage(browser, { lang: 'en-US' }, errors);
  await checkReplay(live.page, false);
  await shu.page.click('#resign-btn');
  await shu.page.click('#confirm-yes');
  for (const p of [wu.page, wei.page]) await p.waitForSelector('#game[data-phase="finished"]', { timeout: 10000 });
  const finished = await newPage(browser, { lang: 'en-US' }, errors);
  await checkReplay(finished.page, true);
  await shot(finished.page, 'yanyi-replay-absorbed.png', '#replay');
  assert.deepEqual(errors, []);
  for (const x of [wu, wei, shu, live, finished]) await x.ctx.close();
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
    // 被将先走 (§11 scenario 1) and 兵力收编 (§11 scenario 3), each with its one move
    for (const [key, from, to] of [['yanyi-turns', 'e10', 'i10'], ['yanyi-absorb', 'm5', 'i5']]) {
      const svg = page.locator(`#rule-${key} [data-diagram="${key}"] svg`);
      assert.equal(await svg.locator('[data-point]').count(), 225);
      assert.equal(await svg.locator(`[data-dest="${to}"]`).count(), 1, key);
      assert.equal(await svg.locator(`.piece[data-at="${from}"]`).count(), 1, key);
    }
    await ctx.close();
  }
  assert.deepEqual(errors, []);
});
