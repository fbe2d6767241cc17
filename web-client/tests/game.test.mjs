// Three players in three browser contexts and a spectator, against the real
// server: create and join by invite links, moves by click, drag and tap, clocks,
// a reload mid-game, the premature-request warning, a draw vote, resignations,
// the result and the replay.

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, launchBrowser, newPage, shot } from './helpers.mjs';

let server;
let browser;
const errors = [];

before(async () => {
  server = await startServer();
  browser = await launchBrowser();
});

after(async () => {
  if (browser) await browser.close();
  if (server) await server.stop();
});

const state = (page) => page.evaluate(() => window.__sanguo && window.__sanguo.state && window.__sanguo.state.game && { ...window.__sanguo.state.game, role: window.__sanguo.state.role, side: window.__sanguo.state.side });

async function waitPly(page, ply) {
  await page.waitForSelector(`#game[data-ply="${ply}"]`, { timeout: 15000 });
}

/** Centre of a point on screen. */
async function pointXY(page, name) {
  const box = await page.locator(`#board [data-point="${name}"]`).boundingBox();
  return [box.x + box.width / 2, box.y + box.height / 2];
}

/** Picks a legal move of the side to move that captures nothing, varying with ply. */
function pickMove(st) {
  const occupied = new Set(st.status.position.split(' ')[0].split(',').map((t) => t.split('@')[1]));
  const quiet = st.status.legal_moves.filter((m) => !occupied.has(m.split('-')[1]));
  const list = quiet.length ? quiet : st.status.legal_moves;
  return list[(st.status.ply * 7 + 3) % list.length];
}

async function clickMove(page, mv, how = 'click') {
  const [from, to] = mv.split('-');
  const [fx, fy] = await pointXY(page, from);
  const [tx, ty] = await pointXY(page, to);
  if (how === 'drag') {
    await page.mouse.move(fx, fy);
    await page.mouse.down();
    await page.mouse.move((fx + tx) / 2, (fy + ty) / 2, { steps: 4 });
    await page.mouse.move(tx, ty, { steps: 4 });
    await page.mouse.up();
  } else if (how === 'tap') {
    await page.touchscreen.tap(fx, fy);
    await page.waitForSelector(`#board [data-dest="${to}"]`, { timeout: 5000 });
    await page.touchscreen.tap(tx, ty);
  } else {
    await page.mouse.click(fx, fy);
    // the legal destinations (from the server's list) are highlighted
    await page.waitForSelector(`#board [data-dest="${to}"]`, { timeout: 5000 });
    await page.mouse.click(tx, ty);
  }
}

const CHARS = {
  W: { K: '魏', Z: '子', F: '妃', A: '仕', E: '相', R: '车', N: '马', C: '炮', P: '兵' },
  B: { K: '蜀', Z: '子', F: '妃', A: '士', E: '象', R: '车', N: '马', C: '炮', P: '卒' },
  Y: { K: '吴', Z: '子', F: '妃', A: '侍', E: '丞', R: '车', N: '马', C: '炮', P: '丁' },
};

const clockText = (page, side) => page.locator(`.clock[data-side="${side}"] .time`).innerText();
const toMs = (s) => {
  const p = s.split(':').map(Number);
  return p.length === 1 ? p[0] * 1000 : p.length === 2 ? (p[0] * 60 + p[1]) * 1000 : ((p[0] * 60 + p[1]) * 60 + p[2]) * 1000;
};

test('three players, a spectator, moves, clocks, reload, draw vote, resignations, replay', { timeout: 240000 }, async () => {
  const W = await newPage(browser, { lang: 'en-US' }, errors);
  const B = await newPage(browser, { lang: 'en-US' }, errors);
  const Y = await newPage(browser, { lang: 'zh-CN', viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 }, errors);
  const S = await newPage(browser, { lang: 'en-US' }, errors);

  // W creates a public 10+5 game from the lobby, sitting as W
  await W.page.goto(server.url + '/');
  await W.page.waitForSelector('#create-form');
  await W.page.selectOption('#preset', 'fischer');
  await W.page.selectOption('#my-seat', 'W');
  await W.page.click('#create-btn');
  await W.page.waitForSelector('#game[data-phase="open"][data-side="W"]');
  const id = await W.page.getAttribute('#game', 'data-game');
  const inviteB = await W.page.inputValue('input[data-invite="B"]');
  const inviteY = await W.page.inputValue('input[data-invite="Y"]');
  assert.match(inviteB, new RegExp(`#/g/${id}\\?seat=B$`));

  // the open game is listed in another browser's lobby
  await S.page.goto(server.url + '/');
  await S.page.waitForSelector(`#open-games tr[data-game="${id}"]`);
  await shot(S.page, 'lobby.png', 'main');

  await B.page.goto(inviteB);
  await Y.page.goto(inviteY);
  for (const [p, side] of [[W.page, 'W'], [B.page, 'B'], [Y.page, 'Y']]) {
    await p.waitForSelector(`#game[data-phase="live"][data-role="player"][data-side="${side}"]`);
    assert.equal(await p.getAttribute('#board', 'data-view'), side, 'own side at the bottom');
  }
  // Chinese UI for the zh-CN browser
  assert.match(await Y.page.locator('#status-line').innerText(), /你执吴/);

  // the spectator watches from the lobby's live list
  await S.page.waitForSelector(`#live-games tr[data-game="${id}"] button`, { timeout: 10000 });
  await S.page.click(`#live-games tr[data-game="${id}"] button`);
  await S.page.waitForSelector('#game[data-phase="live"][data-role="spectator"]');
  assert.equal(await S.page.locator('#board .piece.movable').count(), 0, 'spectators cannot move');
  assert.equal(await S.page.locator('#resign-btn').count(), 0);
  // a spectator may turn the board to any side and back
  await S.page.click('#flip-btn');
  assert.equal(await S.page.getAttribute('#board', 'data-view'), 'B');
  await S.page.click('#flip-btn');
  await S.page.click('#flip-btn');
  assert.equal(await S.page.getAttribute('#board', 'data-view'), 'W');

  const seats = { W: W.page, B: B.page, Y: Y.page };
  const all = [W.page, B.page, Y.page, S.page];

  // W's clock runs while W thinks
  const w0 = toMs(await clockText(B.page, 'W'));
  await W.page.waitForTimeout(1600);
  const w1 = toMs(await clockText(B.page, 'W'));
  assert.ok(w1 < w0, `W's clock ticks on B's screen (${w0} → ${w1})`);

  let ply = 0;
  async function play(how) {
    const st = await state(W.page);
    const side = st.status.turn;
    const page = seats[side];
    const mover = await state(page);
    assert.equal(mover.status.ply, ply);
    const mv = pickMove(mover);
    const piece = mover.status.position.split(' ')[0].split(',').find((t) => t.endsWith(`@${mv.split('-')[0]}`));
    // nobody else may move now
    for (const other of Object.keys(seats).filter((s) => s !== side)) {
      assert.equal(await seats[other].locator('#board .piece.movable').count(), 0);
    }
    await clickMove(page, mv, side === 'Y' ? 'tap' : how);
    ply += 1;
    for (const p of all) await waitPly(p, ply);
    const to = mv.split('-')[1];
    for (const p of all) {
      const at = await p.locator(`#board .piece[data-at="${to}"]`).getAttribute('data-piece');
      assert.equal(at, piece.split('@')[0], `after ${mv} at ply ${ply - 1}: ${at} on ${to}; moves ${(await state(p)).moves.join(' ')}`);
      await p.waitForSelector(`#movelist .mv[data-ply="${ply - 1}"]`);
    }
    // the move list gives the piece and the move in notation
    const [ps, pk] = piece.split('@')[0];
    assert.ok((await S.page.locator(`#movelist .mv[data-ply="${ply - 1}"]`).innerText()).includes(`${CHARS[ps][pk]} ${mv}`));
    return mv;
  }

  await play('click'); // W
  await play('click'); // B
  await play('tap'); // Y (phone)
  await play('drag'); // W by drag

  // B's clock now runs on everyone's screen, W's has stopped
  const b0 = toMs(await clockText(S.page, 'B'));
  const wStop0 = await clockText(S.page, 'W');
  await S.page.waitForTimeout(1300);
  assert.ok(toMs(await clockText(S.page, 'B')) < b0, 'B ticks');
  assert.equal(await clockText(S.page, 'W'), wStop0, 'W stopped');
  assert.equal(await S.page.locator('.clock.turn').getAttribute('data-side'), 'B');

  await shot(W.page, 'seat-W.png');
  await shot(B.page, 'seat-B.png');
  await shot(Y.page, 'seat-Y-phone-board.png');
  await Y.page.screenshot({ path: new URL('../test-artifacts/seat-Y-phone-page.png', import.meta.url).pathname, fullPage: true });
  await shot(S.page, 'spectator.png');

  // B reloads mid-game (its own turn) and continues
  await B.page.reload();
  await B.page.waitForSelector(`#game[data-phase="live"][data-role="player"][data-side="B"][data-ply="${ply}"]`);
  await play('click'); // B after reload

  // the spectator's network drops: it says so, reconnects with its last version and catches up
  const vBefore = Number(await S.page.getAttribute('#game', 'data-v'));
  await S.page.evaluate(() => window.__sanguo.drop());
  await play('click');
  await S.page.waitForSelector('#game[data-connected="true"]', { timeout: 10000 });
  await waitPly(S.page, ply);
  assert.ok(Number(await S.page.getAttribute('#game', 'data-v')) > vBefore);

  // chat: players in theirs, the spectator in its own
  await W.page.fill('#chat-input', 'good luck');
  await W.page.press('#chat-input', 'Enter');
  await B.page.waitForSelector('#chat-log :text("good luck")');
  await S.page.fill('#chat-input', 'nice game');
  await S.page.press('#chat-input', 'Enter');
  await S.page.waitForSelector('#chat-log :text("nice game")');
  assert.equal(await S.page.locator('#chat-log :text("good luck")').count(), 0, 'spectators do not read the players');

  // before round 15, resigning is explained as earning a warning
  await W.page.waitForSelector('#resign-btn');
  await W.page.click('#resign-btn');
  const box = await W.page.locator('#confirm-box').innerText();
  assert.match(box, /warning/i);
  await W.page.click('#confirm-no');
  assert.equal(await W.page.locator('#confirm-box').count(), 0);
  // B goes ahead anyway: everyone sees the warning, B plays on, and is told the next one loses
  await B.page.click('#resign-btn');
  await B.page.click('#confirm-yes');
  for (const p of all) await p.locator('.note', { hasText: /was warned|受到警告/ }).first().waitFor({ timeout: 10000 });
  assert.equal(await S.page.locator('[data-eliminated]').count(), 0);
  await B.page.click('#resign-btn');
  assert.match(await B.page.locator('#confirm-box').innerText(), /LOSES/);
  await B.page.click('#confirm-no');

  // W's lobby offers to resume the game
  await W.page.evaluate(() => (location.hash = '#/'));
  await W.page.waitForSelector(`#my-games tr[data-game="${id}"] button`);
  await W.page.click(`#my-games tr[data-game="${id}"] button`);
  await W.page.waitForSelector(`#game[data-phase="live"][data-side="W"][data-ply="${ply}"]`);

  // play on to round 15
  while ((await state(W.page)).status.round < 15) await play('click');

  // a draw vote: the offer is explained, both others see the consequences and decline
  const offerer = (await state(W.page)).status.turn;
  const op = seats[offerer];
  await op.click('#offer-btn');
  assert.match(await op.locator('#confirm-box').innerText(), /lose/);
  await op.click('#confirm-yes');
  const others = ['W', 'B', 'Y'].filter((s) => s !== offerer);
  for (const s of others) {
    await seats[s].waitForSelector('#draw-answer', { timeout: 10000 });
    const txt = await seats[s].locator('#draw-answer').innerText();
    assert.ok(/lose|判负/.test(txt), `consequences spelled out: ${txt}`);
  }
  await S.page.waitForSelector('#offer-note');
  for (const s of others) {
    await seats[s].click('#decline-draw');
    await seats[s].waitForSelector('#draw-answer', { state: 'detached', timeout: 10000 });
  }
  // play goes on
  await play('click');

  // a resignation: the side to move resigns, its pieces disappear with a note why
  const resigner = (await state(W.page)).status.turn;
  const rp = seats[resigner];
  await rp.click('#resign-btn');
  await rp.click('#confirm-yes');
  for (const p of all) {
    await p.waitForSelector(`[data-eliminated="${resigner}"]`, { timeout: 10000 });
    await p.waitForFunction((side) => !document.querySelector(`#board .piece[data-piece^="${side}"]`), resigner);
  }
  assert.match(await S.page.locator(`[data-eliminated="${resigner}"]`).innerText(), /resigned/);
  await shot(S.page, 'after-resignation.png');
  // a watcher arriving now (from a snapshot, not the live event) still reads why that side left
  await S.page.reload();
  await S.page.waitForSelector(`[data-eliminated="${resigner}"]`, { timeout: 10000 });
  assert.match(await S.page.locator(`[data-eliminated="${resigner}"]`).innerText(), /resigned/);

  // a second resignation ends the game
  const st2 = await state(W.page);
  const second = st2.status.live.find((s) => s !== st2.status.turn) || st2.status.turn;
  await seats[second].click('#resign-btn');
  assert.match(await seats[second].locator('#confirm-box').innerText(), /opponent wins/i);
  await seats[second].click('#confirm-yes');
  const winner = ['W', 'B', 'Y'].find((s) => s !== resigner && s !== second);
  for (const p of all) {
    await p.waitForSelector('#game[data-phase="finished"]', { timeout: 10000 });
    await p.waitForSelector('#result');
  }
  const resultText = await S.page.locator('#result').innerText();
  assert.match(resultText, /wins/);
  assert.match(resultText, new RegExp(['Wei', 'Shu', 'Wu'][['W', 'B', 'Y'].indexOf(winner)]));
  await shot(S.page, 'finished.png', '#game');

  // the replay: jump, step, flip
  await S.page.click('#replay-link');
  await S.page.waitForSelector('#replay[data-loaded="true"]');
  const total = Number(await S.page.getAttribute('#replay', 'data-ply'));
  assert.equal(total, ply);
  await S.page.click('#rp-start');
  await S.page.waitForSelector('#replay[data-ply="0"]');
  assert.equal(await S.page.locator('#board .piece').count(), 54);
  await S.page.click('#rp-fwd');
  await S.page.waitForSelector('#replay[data-ply="1"]');
  await S.page.click('#rp-flip');
  assert.equal(await S.page.getAttribute('#board', 'data-view'), 'B');
  await S.page.click('#rp-end');
  await S.page.waitForSelector(`#replay[data-ply="${total}"]`);
  // the two sides that resigned have left the board at the end
  for (const s of [resigner, second]) assert.equal(await S.page.locator(`#board .piece.side-${s}`).count(), 0);
  await shot(S.page, 'replay.png', '#replay');

  assert.deepEqual(errors, [], 'no page errors');
});

// A line found by random play on this engine: B's 11th-ply cannon move checks W.
const CHECK_LINE = ['W84-B25', 'B92-B91', 'Y24-Y14', 'W82-W74', 'B52-B53', 'Y51-Y41', 'W92-W94', 'B24-B23', 'Y82-Y94', 'B25-B55', 'B84-BM8'];

test('a check is shown: the king in check is marked and everyone is told', { timeout: 120000 }, async () => {
  const pages = {};
  const errs = [];
  const first = await newPage(browser, { lang: 'en-US' }, errs);
  await first.page.goto(server.url + '/');
  await first.page.waitForSelector('#create-form');
  await first.page.selectOption('#my-seat', 'W');
  await first.page.check('input[name=visibility][value=private]');
  await first.page.click('#create-btn');
  await first.page.waitForSelector('#game[data-phase="open"][data-side="W"]');
  pages.W = first.page;
  const id = await first.page.getAttribute('#game', 'data-game');
  const b = await newPage(browser, { lang: 'en-US' }, errs);
  await b.page.goto(`${server.url}/#/g/${id}?seat=B`);
  pages.B = b.page;
  // Y opens the game without a seat, watches, then sits down from the game page
  const y = await newPage(browser, { lang: 'en-US' }, errs);
  await y.page.goto(`${server.url}/#/g/${id}`);
  await y.page.waitForSelector('#game[data-role="spectator"]');
  await y.page.click('button[data-sit="Y"]');
  await y.page.waitForSelector('#game[data-role="player"][data-side="Y"]');
  assert.equal(await y.page.getAttribute('#board', 'data-view'), 'Y');
  pages.Y = y.page;
  for (const p of Object.values(pages)) await p.waitForSelector('#game[data-phase="live"]');
  for (const [i, mv] of CHECK_LINE.entries()) {
    const turn = await pages.W.getAttribute('#game', 'data-turn');
    const st = await state(pages[turn]);
    assert.ok(st.status.legal_moves.includes(mv), `${mv} legal at ply ${i}`);
    await clickMove(pages[turn], mv);
    for (const p of Object.values(pages)) await waitPly(p, i + 1);
  }
  for (const p of Object.values(pages)) {
    await p.waitForSelector('#check-note');
    assert.match(await p.locator('#check-note').innerText(), /Check on Wei/);
    assert.equal(await p.locator('#board .mark.in-check').count(), 1);
  }
  await shot(pages.W, 'check-seat-W.png');
  // the check survives a snapshot: W reloads, a spectator arrives late
  await pages.W.reload();
  const late = await newPage(browser, { lang: 'en-US' }, errs);
  await late.page.goto(`${server.url}/#/g/${id}`);
  for (const p of [pages.W, late.page]) {
    await p.waitForSelector(`#game[data-phase="live"][data-ply="${CHECK_LINE.length}"]`);
    await p.waitForSelector('#check-note');
    assert.match(await p.locator('#check-note').innerText(), /Check on Wei/);
    assert.equal(await p.locator('#board .mark.in-check').count(), 1);
  }
  const snap = await (await fetch(`${server.url}/api/games/${id}`)).json();
  assert.deepEqual(snap.status.in_check, ['W']);
  assert.deepEqual(errs, []);
});

test('the server restarts mid-game: every page says it lost the connection, reconnects and plays on', { timeout: 120000 }, async () => {
  const own = await startServer();
  const errs = [];
  const pages = {};
  try {
    for (const side of ['W', 'B', 'Y']) pages[side] = (await newPage(browser, { lang: 'en-US' }, errs)).page;
    await pages.W.goto(own.url + '/');
    await pages.W.waitForSelector('#create-form');
    await pages.W.selectOption('#my-seat', 'W');
    await pages.W.click('#create-btn');
    await pages.W.waitForSelector('#game[data-phase="open"][data-side="W"]');
    const id = await pages.W.getAttribute('#game', 'data-game');
    for (const side of ['B', 'Y']) await pages[side].goto(`${own.url}/#/g/${id}?seat=${side}`);
    for (const p of Object.values(pages)) await p.waitForSelector('#game[data-phase="live"][data-connected="true"]');
    const st = await state(pages.W);
    await clickMove(pages.W, pickMove(st));
    for (const p of Object.values(pages)) await waitPly(p, 1);

    await own.stop({ keep: true });
    for (const p of Object.values(pages)) {
      await p.waitForSelector('#game[data-connected="false"]');
      assert.match(await p.locator('#banner').innerText(), /reconnecting/i);
    }
    const again = await startServer([], { port: own.port, dir: own.dir });
    own.stop = again.stop;
    for (const p of Object.values(pages)) {
      await p.waitForSelector('#game[data-connected="true"][data-phase="live"][data-ply="1"]', { timeout: 20000 });
    }
    // B moves on after the restart
    const sb = await state(pages.B);
    assert.equal(sb.status.turn, 'B');
    await clickMove(pages.B, pickMove(sb));
    for (const p of Object.values(pages)) await waitPly(p, 2);
    await shot(pages.Y, 'after-restart-seat-Y.png', '#game');
    assert.deepEqual(errs, []);
  } finally {
    await own.stop();
  }
});

/** Three players in three pages on a new private game (W creates it); resolves to {id, pages}. */
async function threePlayers(errs, lang = 'en-US') {
  const pages = {};
  const w = await newPage(browser, { lang }, errs);
  await w.page.goto(server.url + '/');
  await w.page.waitForSelector('#create-form');
  await w.page.selectOption('#my-seat', 'W');
  await w.page.check('input[name=visibility][value=private]');
  await w.page.click('#create-btn');
  await w.page.waitForSelector('#game[data-phase="open"][data-side="W"]');
  pages.W = w.page;
  const id = await w.page.getAttribute('#game', 'data-game');
  for (const side of ['B', 'Y']) {
    pages[side] = (await newPage(browser, { lang }, errs)).page;
    await pages[side].goto(`${server.url}/#/g/${id}?seat=${side}`);
  }
  for (const p of Object.values(pages)) await p.waitForSelector('#game[data-phase="live"]');
  return { id, pages };
}

async function clickPoints(page, ...names) {
  for (const n of names) {
    const [x, y] = await pointXY(page, n);
    await page.mouse.click(x, y);
  }
}

test('a refused move says why, in the game’s terms: 先击后攻, a piece without that move, not your turn', { timeout: 120000 }, async () => {
  const errs = [];
  const { id, pages } = await threePlayers(errs);
  // W's cannon may not take Y's horse at move 1: Y is upstream and has not struck first
  await clickPoints(pages.W, 'W24', 'Y82');
  await pages.W.waitForSelector('#refusal-note[data-code="no_retaliation_right"]');
  assert.match(await pages.W.locator('#refusal-note').innerText(), /先击后攻: Wei may not capture a piece of its upstream side Wu/);
  assert.equal(await pages.W.getAttribute('#game', 'data-ply'), '0', 'nothing was played');
  assert.equal(await pages.W.getAttribute('#refusal-note a.rule-link', 'href'), '#/rules/retaliation', 'the rule it cites');
  // a drag that the board refuses says why too: a horse does not move like that
  const [fx, fy] = await pointXY(pages.W, 'W22');
  const [tx, ty] = await pointXY(pages.W, 'W23');
  await pages.W.mouse.move(fx, fy);
  await pages.W.mouse.down();
  await pages.W.mouse.move(tx, ty, { steps: 6 });
  await pages.W.mouse.up();
  await pages.W.waitForSelector('#refusal-note[data-code="not_this_pieces_move"]');
  assert.match(await pages.W.locator('#refusal-note').innerText(), /A Wei horse does not move that way/);
  // B clicks one of its pieces while W is to move
  await clickPoints(pages.B, 'B24');
  await pages.B.waitForSelector('#refusal-note[data-code="not_your_turn"]');
  assert.match(await pages.B.locator('#refusal-note').innerText(), /Not your turn: it is Wei’s move/);
  // the server's explanation itself, for any client
  const ex = await (await fetch(`${server.url}/api/games/${id}/explain`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ mv: 'W24-Y82' }) })).json();
  assert.deepEqual(ex.refusal.params, { mover: 'W', upstream: 'Y' });
  assert.deepEqual(errs, []);
});

test('chat survives a reload, and after the game players and spectators talk', { timeout: 120000 }, async () => {
  const errs = [];
  const { id, pages } = await threePlayers(errs);
  await pages.W.fill('#chat-input', 'good luck, both');
  await pages.W.press('#chat-input', 'Enter');
  await pages.B.waitForFunction(() => document.querySelector('#chat-log').textContent.includes('good luck, both'));
  await pages.B.reload();
  await pages.B.waitForSelector('#game[data-phase="live"]');
  await pages.B.waitForFunction(() => document.querySelector('#chat-log').textContent.includes('good luck, both'));
  // B and Y resign twice each (the first request before round 15 is only a warning): the game ends
  for (const side of ['B', 'Y']) {
    for (let k = 0; k < 2; k++) {
      await pages[side].click('#resign-btn');
      await pages[side].click('#confirm-yes');
      await pages[side].waitForFunction((n) => (window.__sanguo.state.game.status.counters.warnings['WBY'.indexOf(window.__sanguo.state.side)] >= 1) || window.__sanguo.state.game.phase === 'finished' || n === 0, k);
    }
  }
  await pages.W.waitForSelector('#game[data-phase="finished"]');
  const fan = (await newPage(browser, { lang: 'en-US' }, errs)).page;
  await fan.goto(`${server.url}/#/g/${id}`);
  await fan.waitForSelector('#game[data-phase="finished"][data-role="spectator"]');
  assert.doesNotMatch(await fan.locator('#chat-log').innerText(), /good luck/, 'the players’ channel stays theirs');
  // W writes to the spectators; the spectator answers and W reads it
  await pages.W.waitForSelector('#chat-channel:not([hidden])');
  await pages.W.selectOption('#chat-channel', 'spectators');
  await pages.W.fill('#chat-input', 'thanks for watching');
  await pages.W.press('#chat-input', 'Enter');
  await fan.waitForFunction(() => document.querySelector('#chat-log').textContent.includes('thanks for watching'));
  await fan.fill('#chat-input', 'well played');
  await fan.press('#chat-input', 'Enter');
  await pages.W.waitForFunction(() => document.querySelector('#chat-log').textContent.includes('well played'));
  // the end has its own sound
  assert.ok((await pages.W.evaluate(() => window.__sanguoSounds || [])).includes('end'));
  // a rematch: W opens a new game at its seat; B follows the link the chat gives
  await pages.W.click('#rematch-btn');
  await pages.W.waitForSelector('#game[data-phase="open"][data-side="W"]');
  const again = await pages.W.getAttribute('#game', 'data-game');
  assert.notEqual(again, id);
  await pages.B.waitForSelector(`#chat-log a.game-link[href^="#/g/${again}"]`);
  await pages.B.click(`#chat-log a.game-link[href^="#/g/${again}"]`);
  await pages.B.waitForSelector(`#game[data-game="${again}"][data-role="player"]`);
  const snap = await (await fetch(`${server.url}/api/games/${again}`)).json();
  assert.equal(snap.seats.filter(Boolean).length, 2);
  assert.deepEqual(errs, []);
});
