// A tournament in the browser against the real server: an organizer signs up,
// creates a Swiss event and shares the invitation link; three players register
// and check in from it; the organizer pairs round 1; each player's lobby shows
// the board to go to; the organizer pauses the game (the players' boards show
// it) and adjudicates it; a spectator sees pairings, the result, and the
// standings.

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

/** A new guest opens the invitation link, registers and checks in; returns its page. */
async function registerAndCheckIn(link) {
  const { page } = await newPage(browser, {}, errors);
  await page.goto(link);
  await page.click('#register');
  await page.click('#check-in');
  const me = await page.evaluate(() => JSON.parse(localStorage.getItem('sanguo.session')).player);
  await page.waitForFunction((id) => (document.querySelector(`#t-players [data-player="${id}"]`) || {}).textContent?.includes('✓'), me);
  return page;
}

/** An organizer signs up and creates a one-round Swiss event from the form; returns its page and the invitation link. */
async function createTournament(user, name, byes = 'points') {
  const { page: org } = await newPage(browser, {}, errors);
  await org.goto(`${server.url}/#/t`);
  await org.fill('#acct-user', `${user}_${Date.now() % 100000}`);
  await org.fill('#acct-pass', 'a long enough password');
  await org.click('#sign-up');
  await org.waitForSelector('#tournament-form');
  await org.fill('#tn-name', name);
  await org.fill('#tn-rounds', '1');
  await org.selectOption('#tn-byes', byes);
  await org.click('#tn-create');
  await org.waitForSelector('#t-organizer:not([hidden]) #invite-link');
  return { org, link: await org.textContent('#invite-link') };
}

test('organizer, players and a spectator run a tournament from the pages', async () => {
  const { org, link } = await createTournament('org', 'Browser cup');
  assert.match(link, /#\/t\/[0-9a-f]+\?code=[A-Z0-9]{8}$/);
  const id = link.split('#/t/')[1].split('?')[0];

  const players = [];
  for (let i = 0; i < 3; i++) {
    const page = await registerAndCheckIn(link);
    players.push(page);
  }
  // Every player registered and checked in, in order.
  await org.waitForFunction(() => document.querySelectorAll('#t-players [data-player]').length === 3 && document.querySelector('#t-players').textContent.split('✓').length === 4);

  await org.waitForSelector('#pair-next:not([disabled])');
  await org.click('#pair-next');
  await org.waitForSelector('#t-pairings tr[data-table="1"]');
  const game = await org.getAttribute('#t-pairings tr[data-table="1"]', 'data-game');
  await org.waitForSelector(`#t-live .live-table[data-game="${game}"] svg`);

  // Each player's lobby lists the board; they go there and are seated and live.
  for (const page of players) {
    await page.goto(`${server.url}/#/`);
    await page.click(`#boards-card button[data-game="${game}"]`);
    await page.waitForSelector('#game[data-phase="live"][data-role="player"]');
  }
  await shot(org, 'tournament-organizer.png', '#tournament');

  // Pause with a reason: every board shows it.
  await org.fill('#arb-reason', 'a phone rang');
  await org.click(`#t-pairings tr[data-game="${game}"] button[data-act="pause"]`);
  for (const page of players) await page.waitForSelector('#game[data-paused="true"]');
  await org.waitForSelector(`#t-live .live-table[data-game="${game}"][data-paused="true"]`);

  // Adjudicate: B wins.
  await org.fill('#arb-reason', 'the hall closes');
  await org.selectOption('#arb-outcome', 'B');
  await org.click(`#t-pairings tr[data-game="${game}"] button[data-act="adjudicate"]`);
  for (const page of players) await page.waitForSelector('#game[data-phase="finished"]');
  await org.waitForSelector('#t-status[data-status="finished"]');

  // A spectator without any part in it sees the pairings, result and standings.
  const { page: fan } = await newPage(browser, {}, errors);
  await fan.goto(`${server.url}/#/t/${id}`);
  await fan.waitForSelector('#t-status[data-status="finished"]');
  assert.equal(await fan.isHidden('#t-organizer'), true);
  const result = await fan.textContent(`#t-pairings tr[data-game="${game}"] .result`);
  assert.match(result, /Adjudicated/);
  const rows = await fan.$$eval('#standings tbody tr', (trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent)));
  assert.equal(rows.length, 3);
  assert.deepEqual(rows.map((r) => r[2]), ['3', '0', '0']);
  const names = await fan.$$eval(`#t-pairings tr[data-game="${game}"] td:nth-child(2) div`, (ds) => ds.map((d) => d.textContent));
  assert.equal(rows[0][1], names[1], 'B, who was given the win, leads');
  const csv = await (await fetch(`${server.url}/api/tournaments/${id}/standings.csv`)).text();
  assert.equal(csv.trim().split('\n').length, 4);
  await shot(fan, 'tournament-spectator.png', '#tournament');

  // The organizer corrects the finished game's result: Y wins after all; logged with who and why.
  await org.fill('#arb-reason', 'the score sheet was misread');
  await org.selectOption('#arb-outcome', 'Y');
  await org.click(`#t-pairings tr[data-game="${game}"] button[data-act="correct"]`);
  const round = await (await fetch(`${server.url}/api/tournaments/${id}/rounds/1`)).json();
  const y = round.tables[0].seats[2];
  // the spectator's standings follow: Y leads now
  await fan.waitForFunction((p) => document.querySelector('#standings tbody tr[data-player]')?.getAttribute('data-player') === p, y, { timeout: 20000 });
  const st = await (await fetch(`${server.url}/api/tournaments/${id}/standings`)).json();
  assert.equal(st.standings[0].player, y, 'Y leads now');
  assert.deepEqual(st.standings.map((r) => r.points), [3, 0, 0]);
  const log = await (await fetch(`${server.url}/api/tournaments/${id}/log`)).json();
  assert.equal(log[log.length - 1].reason, 'the score sheet was misread');
  assert.deepEqual(errors, []);
});

test('an organizer fills byes with bots: the player left over plays two bots', async () => {
  const { org, link } = await createTournament('orgb', 'Bot cup', '2');
  const id = link.split('#/t/')[1].split('?')[0];
  const t = await (await fetch(`${server.url}/api/tournaments/${id}`)).json();
  assert.deepEqual(t.settings.byes, { kind: 'bot', level: 2 });

  // Four players: one table of three, and one player left over.
  for (let i = 0; i < 4; i++) {
    const page = await registerAndCheckIn(link);
    await page.close();
  }
  await org.waitForFunction(() => document.querySelector('#t-players').textContent.split('✓').length === 5);
  await org.waitForSelector('#pair-next:not([disabled])');
  await org.click('#pair-next');
  await org.waitForSelector('#t-pairings tr[data-table="2"]');
  const tables = await org.$$eval('#t-pairings tr[data-table]', (trs) => trs.map((tr) => tr.textContent));
  assert.equal(tables.length, 2);
  const withBots = tables.filter((x) => x.split('Bot (level 2)').length === 3);
  assert.equal(withBots.length, 1, `one table with two level-2 bots: ${tables.join(' | ')}`);
  // Nobody sits out: the round has no bye rows.
  assert.equal(await org.$$eval('#t-pairings tr.bye', (trs) => trs.length), 0);
  await shot(org, 'tournament-bots.png', '#tournament');
  assert.deepEqual(errors, []);
});

test('withdrawing asks first; before round 1 it takes the registration back; the organizer withdraws and reinstates', async () => {
  const { org, link } = await createTournament('org3', 'Second thoughts');
  const players = [];
  for (let i = 0; i < 4; i++) players.push(await registerAndCheckIn(link));
  const page = players[3];
  const me = await page.evaluate(() => JSON.parse(localStorage.getItem('sanguo.session')).player);
  // one click only asks
  await page.click('#withdraw');
  await page.waitForSelector('#withdraw-confirm:not([hidden])');
  assert.match(await page.locator('#withdraw-confirm').innerText(), /registration/);
  await page.click('#withdraw-no');
  await page.waitForSelector('#withdraw-confirm', { state: 'hidden' });
  assert.equal(await page.locator(`#t-players [data-player="${me}"]`).count(), 1, 'still registered');
  await page.click('#withdraw');
  await page.click('#withdraw-yes');
  await page.waitForFunction((id) => !document.querySelector(`#t-players [data-player="${id}"]`), me);
  await page.waitForSelector('#register');
  // a player who registered but did not check in: the organizer checks it in
  const code = link.split('code=')[1];
  const late = await (await fetch(`${server.url}/api/sessions`, { method: 'POST' })).json();
  const reg = await fetch(`${server.url}/api/tournaments/register`, { method: 'POST', headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${late.token}` }, body: JSON.stringify({ code }) });
  assert.equal(reg.status, 201);
  await org.reload();
  await org.click(`[data-org-player="${late.player}"][data-org-act="check-in"]`);
  await org.waitForFunction((p) => document.querySelector(`#t-players [data-player="${p}"]`).textContent.includes('✓'), late.player);
  // after round 1 the organizer withdraws a player and takes it back
  await org.reload();
  await org.waitForSelector('#pair-next:not([disabled])');
  await org.click('#pair-next');
  await org.waitForSelector('#t-status[data-round="1"]');
  const p0 = await players[0].evaluate(() => JSON.parse(localStorage.getItem('sanguo.session')).player);
  await org.click(`[data-org-player="${p0}"][data-org-act="withdraw"]`);
  await org.waitForSelector(`[data-org-player="${p0}"][data-org-act="reinstate"]`);
  assert.match(await org.locator(`#t-players [data-player="${p0}"]`).innerText(), /withdrawn/);
  await org.click(`[data-org-player="${p0}"][data-org-act="reinstate"]`);
  await org.waitForSelector(`[data-org-player="${p0}"][data-org-act="withdraw"]`);
  assert.doesNotMatch(await org.locator(`#t-players [data-player="${p0}"]`).innerText(), /withdrawn/);
  assert.deepEqual(errors, []);
});

test('the organizer deletes an event before round 1 with a reason', async () => {
  const { org, link } = await createTournament('org4', 'Never mind');
  const id = link.split('#/t/')[1].split('?')[0];
  await org.waitForSelector('#delete-event:not([hidden])');
  assert.equal(await org.isHidden('#finish-event'), true);
  await org.click('#delete-event');
  await org.waitForSelector('#tp-error:not([hidden])'); // no reason given: refused, in words
  await org.fill('#arb-reason', 'the hall is booked');
  await org.click('#delete-event');
  await org.waitForFunction(() => location.hash === '#/t');
  assert.equal((await fetch(`${server.url}/api/tournaments/${id}`)).status, 404);
  const log = await (await fetch(`${server.url}/api/tournaments/${id}/organizer-log`)).json();
  assert.equal(log[0].reason, 'the hall is booked');
  assert.deepEqual(errors, []);
});

test('the create form takes what the API does: a custom clock, direction, registration window, start, grace', async () => {
  const { page: org } = await newPage(browser, {}, errors);
  await org.goto(`${server.url}/#/t`);
  await org.fill('#acct-user', `orgf_${Date.now() % 100000}`);
  await org.fill('#acct-pass', 'a long enough password');
  await org.click('#sign-up');
  await org.waitForSelector('#tournament-form');
  await org.fill('#tn-name', 'Blitz night');
  await org.selectOption('#tn-preset', 'custom');
  await org.fill('#tn-c-base', '0.33333');
  await org.fill('#tn-c-inc', '1');
  await org.selectOption('#tn-direction', 'cw');
  await org.fill('#tn-reg-closes', '2099-01-01T20:00');
  await org.fill('#tn-starts', '2098-12-31T19:30');
  await org.fill('#tn-grace', '30');
  await org.click('#tn-create');
  await org.waitForSelector('#t-organizer:not([hidden]) #invite-link');
  const id = (await org.textContent('#invite-link')).split('#/t/')[1].split('?')[0];
  const t = await (await fetch(`${server.url}/api/tournaments/${id}`)).json();
  const s = t.settings;
  assert.deepEqual([s.time_control.base_ms, s.time_control.increment_ms, s.direction, s.grace_ms], [20000, 1000, 'cw', 30000]);
  assert.equal(s.registration_closes_ms, new Date('2099-01-01T20:00').getTime());
  assert.equal(s.starts_ms, new Date('2098-12-31T19:30').getTime());
  assert.match(await org.locator('#t-status').innerText(), /20″ \+1″/);
  assert.deepEqual(errors, []);
});

test('the organizer edits the settings before round 1 and closes and reopens late entries, each logged', async () => {
  const { org, link } = await createTournament('orge', 'Spring open');
  const id = link.split('#/t/')[1].split('?')[0];
  const code = link.split('code=')[1];
  // Edit: the create form comes filled in with the event's settings.
  await org.click('#edit-event');
  await org.waitForSelector('#te-form');
  assert.equal(await org.inputValue('#te-name'), 'Spring open');
  assert.equal(await org.inputValue('#te-rounds'), '1');
  await org.fill('#te-name', 'Spring open (3 rounds)');
  await org.fill('#te-rounds', '3');
  await org.click('#te-submit');
  await org.waitForSelector('#te-error:not([hidden])'); // no reason given: refused, in words, nothing changed
  assert.equal((await (await fetch(`${server.url}/api/tournaments/${id}`)).json()).settings.name, 'Spring open');
  await org.fill('#arb-reason', 'three rounds fit the evening');
  await org.click('#te-submit');
  await org.waitForFunction(() => document.querySelector('#t-name').textContent === 'Spring open (3 rounds)');
  assert.equal(await org.isHidden('#edit-box'), true);
  assert.equal((await (await fetch(`${server.url}/api/tournaments/${id}`)).json()).settings.rounds, 3);

  // Close registration now: a newcomer with the code is refused, in words.
  await org.waitForSelector('#reg-state[data-open="true"]');
  await org.click('#reg-close');
  await org.waitForSelector('#reg-state[data-open="false"]');
  assert.equal(await org.isHidden('#reg-close'), true);
  const { page: late } = await newPage(browser, {}, errors);
  await late.goto(link);
  await late.waitForSelector('#register-closed');
  assert.equal(await late.isVisible('#register'), false);
  const guest = await (await fetch(`${server.url}/api/sessions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).json();
  const refused = await fetch(`${server.url}/api/tournaments/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${guest.token}` },
    body: JSON.stringify({ code }),
  });
  assert.equal(refused.status, 409);
  assert.equal((await refused.json()).code, 'tournament_state');

  // Reopen: the newcomer's page offers registration again (it refreshes), and it registers.
  await org.click('#reg-reopen');
  await org.waitForSelector('#reg-state[data-open="true"]');
  await late.click('#register');
  const me = await late.evaluate(() => JSON.parse(localStorage.getItem('sanguo.session')).player);
  await late.waitForSelector(`#t-players [data-player="${me}"]`);

  const log = await (await fetch(`${server.url}/api/tournaments/${id}/organizer-log`)).json();
  assert.deepEqual(
    log.map((l) => l.action),
    ['edit', 'registration', 'registration'],
  );
  assert.ok(log.every((l) => l.reason === 'three rounds fit the evening'));
  assert.deepEqual(errors, []);
});
