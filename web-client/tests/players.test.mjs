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
