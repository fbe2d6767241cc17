// Accounts from the main page (issue 16): a guest creates a game and sits in
// it, signs up from the header (a too-short password is refused first, in
// words), keeps its game — it is on the new account's profile —, sees its
// sessions, logs out and in again; the leaderboard page answers.

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

test('a guest who played signs up from the header and finds its game on its profile', { timeout: 90000 }, async () => {
  const errors = [];
  const { page, ctx } = await newPage(browser, { lang: 'en-US' }, errors);
  await page.goto(server.url + '/');
  await page.waitForSelector('#create-form');
  const guestName = await page.locator('#me').innerText();
  assert.match(guestName, /^guest-/);
  assert.equal(await page.locator('#account-link').innerText(), 'Sign in / sign up');
  // The guest plays: two bots, the guest at W; the game starts at once.
  await page.selectOption('#bot-B', '1');
  await page.selectOption('#bot-Y', '1');
  await page.selectOption('#my-seat', 'W');
  await page.click('#create-btn');
  await page.waitForSelector('#game[data-phase="live"][data-side="W"]', { timeout: 15000 });
  const game = await page.getAttribute('#game', 'data-game');
  const player = await page.evaluate(() => JSON.parse(localStorage.getItem('sanguo.session')).player);

  // Sign up from the header: a short password is refused with a reason.
  await page.click('#account-link');
  await page.waitForSelector('#acct-form');
  assert.match(await page.locator('#account').innerText(), /your games so far stay yours/);
  const username = `liu_bei_${Date.now() % 100000}`;
  await page.fill('#acct-user', username);
  await page.fill('#acct-pass', 'short');
  await page.click('#acct-sign-up');
  await page.waitForSelector('#acct-error:not([hidden])');
  assert.match(await page.locator('#acct-error').innerText(), /at least 8 characters/);
  await page.fill('#acct-pass', 'peach garden oath');
  await page.click('#acct-sign-up');

  // The same player, now an account, with its game on its profile.
  await page.waitForSelector(`#profile[data-player="${player}"][data-loaded="true"]`, { timeout: 10000 });
  assert.equal(await page.locator('#profile-name').innerText(), username);
  await page.waitForSelector(`#profile-games tr[data-game="${game}"]`);
  assert.match(await page.locator(`#profile-games tr[data-game="${game}"]`).innerText(), /casual/);
  assert.equal(await page.locator('#me').innerText(), username);
  assert.equal(await page.locator('#account-link').innerText(), 'Account');
  const session = await page.evaluate(() => JSON.parse(localStorage.getItem('sanguo.session')));
  assert.deepEqual([session.player, session.account], [player, true]);

  // Its sessions: the guest's and the new one; this browser's is marked.
  await page.click('#account-link');
  await page.waitForSelector('#sessions tr[data-session]');
  assert.equal(await page.locator('#sessions tr[data-session]').count(), 2);
  assert.match(await page.locator('#sessions').innerText(), /this browser/);
  // Revoke the other one (the guest's old token).
  await page.locator('#sessions tr[data-session]:not(:has-text("this browser")) [data-revoke]').click();
  await page.waitForFunction(() => document.querySelectorAll('#sessions tr[data-session]').length === 1, null, { timeout: 5000 });

  // Log out: a new guest; log in again: the account.
  await page.click('#log-out');
  await page.waitForSelector('#acct-form');
  assert.match(await page.locator('#me').innerText(), /^guest-/);
  await page.fill('#acct-user', username);
  await page.fill('#acct-pass', 'peach garden oath');
  await page.click('#acct-sign-in');
  await page.waitForSelector(`#profile[data-player="${player}"][data-loaded="true"]`, { timeout: 10000 });

  // Chinese: the profile's words are translated.
  await page.click('#lang-toggle');
  await page.waitForSelector(`#profile[data-loaded="true"]`);
  assert.match(await page.locator('#profile').innerText(), /各座位战绩/);
  await page.click('#lang-toggle');

  // The leaderboard answers (nobody is rated yet).
  await page.click('#leaderboard-link');
  await page.waitForSelector('#leaderboard p, #leaderboard table');
  assert.match(await page.locator('#leaderboard').innerText(), /Nobody here yet/);
  assert.deepEqual(errors, []);
  await ctx.close();
});

test('three accounts press the same quick-pairing tile and land in one game', { timeout: 90000 }, async () => {
  const errors = [];
  const pages = [];
  for (let i = 0; i < 3; i++) {
    const { page, ctx } = await newPage(browser, { lang: i === 1 ? 'zh-CN' : 'en-US' }, errors);
    await page.goto(server.url + '/');
    await page.waitForSelector('#create-form');
    // An account from the page's own session (the guest becomes it).
    await page.evaluate(async (n) => {
      const guest = JSON.parse(localStorage.getItem('sanguo.session'));
      const r = await fetch('/api/accounts', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${guest.token}` },
        body: JSON.stringify({ username: `tile_${n}_${Date.now() % 100000}`, password: 'three kingdoms' }),
      });
      localStorage.setItem('sanguo.session', JSON.stringify(await r.json()));
    }, i);
    await page.reload();
    await page.waitForSelector('#pairing-tiles [data-tile="3+2"]');
    pages.push({ page, ctx });
  }
  for (const { page } of pages.slice(0, 2)) {
    await page.click('#pairing-tiles [data-tile="3+2"]');
    await page.waitForSelector('#pairing-cancel');
  }
  await pages[0].page.waitForFunction(() => /2 waiting/.test(document.querySelector('#pairing-tiles [data-tile="3+2"]').textContent), null, { timeout: 10000 });
  await pages[2].page.click('#pairing-tiles [data-tile="3+2"]');
  const seen = [];
  for (const { page } of pages) {
    await page.waitForSelector('#game[data-phase="live"][data-side]', { timeout: 15000 });
    seen.push([await page.getAttribute('#game', 'data-game'), await page.getAttribute('#game', 'data-side')]);
  }
  assert.equal(new Set(seen.map((s) => s[0])).size, 1, 'one game');
  assert.deepEqual(seen.map((s) => s[1]).sort(), ['B', 'W', 'Y']);
  const st = await pages[0].page.evaluate(() => window.__sanguo.state.game.settings);
  assert.equal(st.rated, true);
  assert.deepEqual([st.time_control.base_ms, st.time_control.increment_ms], [180000, 2000]);
  assert.deepEqual(errors, []);
  for (const { ctx } of pages) await ctx.close();
});

test('alone at a tile for 30 s, a guest is offered two bots at that clock instead', { timeout: 90000 }, async () => {
  const errors = [];
  const { page, ctx } = await newPage(browser, { lang: 'en-US' }, errors);
  await page.goto(server.url + '/');
  await page.waitForSelector('#pairing-tiles [data-tile="1+0"]');
  await page.click('#pairing-tiles [data-tile="1+0"]');
  await page.waitForSelector('#pairing-cancel');
  assert.equal(await page.locator('#pairing-bots').count(), 0, 'no offer at once');
  await page.waitForSelector('#pairing-bots', { timeout: 40000 });
  await page.click('#pairing-bots');
  await page.waitForSelector('#game[data-phase="live"][data-side="W"]', { timeout: 15000 });
  const g = await page.evaluate(() => window.__sanguo.state.game);
  assert.deepEqual([g.settings.time_control.base_ms, g.settings.time_control.increment_ms, !!g.settings.rated], [60000, 0, false]);
  assert.deepEqual(g.seats.map((s) => s && s.bot), [undefined, 2, 2]);
  // It left the pool.
  const st = await page.evaluate(async () => {
    const s = JSON.parse(localStorage.getItem('sanguo.session'));
    return (await fetch('/api/pairing', { headers: { Authorization: `Bearer ${s.token}` } })).json();
  });
  assert.equal(st.state, 'idle');
  assert.deepEqual(errors, []);
  await ctx.close();
});

test('a rated seek with a rating range: a guest sees it greyed out with the reason, two accounts take it and all three land in one game', { timeout: 90000 }, async () => {
  const errors = [];
  const pages = [];
  for (let i = 0; i < 3; i++) {
    const { page, ctx } = await newPage(browser, { lang: 'en-US' }, errors);
    await page.goto(server.url + '/');
    await page.waitForSelector('#create-form');
    await page.evaluate(async (n) => {
      const guest = JSON.parse(localStorage.getItem('sanguo.session'));
      const r = await fetch('/api/accounts', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${guest.token}` },
        body: JSON.stringify({ username: `seek_${n}_${Date.now() % 100000}`, password: 'three kingdoms' }),
      });
      localStorage.setItem('sanguo.session', JSON.stringify(await r.json()));
    }, i);
    await page.reload();
    await page.waitForSelector('#seek-form');
    pages.push({ page, ctx });
  }
  // The first posts a rated 10+5 seek, ±200 around its 1500.
  const p0 = pages[0].page;
  await p0.selectOption('#seek-clock', '10+5');
  await p0.check('#seek-rated');
  await p0.selectOption('#seek-range', '200');
  await p0.click('#seek-post');
  await p0.waitForSelector('#seek-list tr[data-mine="true"] [data-cancel]');
  const id = await p0.getAttribute('#seek-list tr[data-mine="true"]', 'data-seek');
  assert.match(await p0.locator(`#seek-list tr[data-seek="${id}"] .seek-range`).innerText(), /1300–1700/);

  // A guest (in Chinese) sees it greyed out, with the reason in its language.
  const guest = await newPage(browser, { lang: 'zh-CN' }, errors);
  await guest.page.goto(server.url + '/');
  await guest.page.waitForSelector(`#seek-list tr[data-seek="${id}"].greyed button[data-join][disabled]`, { timeout: 10000 });
  assert.match(await guest.page.locator(`#seek-list tr[data-seek="${id}"] .seek-refusal`).innerText(), /只限注册账号/);

  // The second takes it and waits; the third's take starts the game.
  const p1 = pages[1].page;
  await p1.waitForSelector(`#seek-list tr[data-seek="${id}"] button[data-join]:not([disabled])`, { timeout: 10000 });
  await p1.click(`#seek-list tr[data-seek="${id}"] button[data-join]`);
  await p1.waitForSelector(`#seek-list tr[data-seek="${id}"] [data-cancel]`);
  const p2 = pages[2].page;
  await p2.waitForFunction((k) => /2\/3/.test((document.querySelector(`#seek-list tr[data-seek="${k}"]`) || {}).textContent || ''), id, { timeout: 10000 });
  await p2.click(`#seek-list tr[data-seek="${id}"] button[data-join]`);
  const seen = [];
  for (const { page } of pages) {
    await page.waitForSelector('#game[data-phase="live"][data-side]', { timeout: 15000 });
    seen.push([await page.getAttribute('#game', 'data-game'), await page.getAttribute('#game', 'data-side')]);
  }
  assert.equal(new Set(seen.map((s) => s[0])).size, 1, 'one game');
  assert.deepEqual(seen.map((s) => s[1]).sort(), ['B', 'W', 'Y']);
  const st = await p0.evaluate(() => window.__sanguo.state.game.settings);
  assert.equal(st.rated, true);
  assert.deepEqual([st.time_control.base_ms, st.time_control.increment_ms], [600000, 5000]);
  // The seek is gone from the lobby.
  await guest.page.waitForFunction((k) => !document.querySelector(`#seek-list tr[data-seek="${k}"]`), id, { timeout: 10000 });
  assert.deepEqual(errors, []);
  for (const { ctx } of [...pages, guest]) await ctx.close();
});
