// The player's side (issue 16): #/account (sign up — a guest keeps its games —,
// log in, log out, sessions), #/player/ID (ratings with a small SVG chart per
// rating, W/D/L per seat, the latest games) and #/leaderboard; and the rating
// changes of a finished rated game (game page and replay).

import { t, sideName, variantName, errorText } from './i18n.js';
import { api, currentSession, signIn, logOut } from './api.js';
import { SIDES } from './geometry.js';
import { h, clear, tcLabel } from './ui.js';
import { variants } from './variants.js';

export const CLASSES = ['bullet', 'blitz', 'rapid', 'classical'];
/** The password policy of the server (protocol/README.md, accounts). */
export const MIN_PASSWORD = 8;
export const MAX_PASSWORD = 128;

/** A password's problem in words, or null. */
export function passwordProblem(p) {
  const n = [...p].length;
  if (n < MIN_PASSWORD) return t('pwTooShort', { n: MIN_PASSWORD });
  if (n > MAX_PASSWORD) return t('pwTooLong', { n: MAX_PASSWORD });
  return null;
}

/** A username's problem in words, or null. */
export function usernameProblem(u) {
  return /^[A-Za-z0-9_-]{3,32}$/.test(u) ? null : t('err_bad_username');
}

/** A rating as shown: 1523, or 1500? while provisional. */
export function ratingText(r) {
  return `${r.rating}${r.provisional ? '?' : ''}`;
}

const signed = (d) => (d > 0 ? `+${d}` : d < 0 ? `−${-d}` : '±0');

function when(ms) {
  return new Date(ms).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

// ---------------------------------------------------------------------------
// #/account
// ---------------------------------------------------------------------------

export function mountAccount(root, navigate, onSession) {
  clear(root);
  const card = h('section', { class: 'card', id: 'account' });
  root.appendChild(h('div', { class: 'narrow' }, card));
  let destroyed = false;

  function authForm() {
    const s = currentSession();
    const user = h('input', { id: 'acct-user', autocomplete: 'username', maxlength: '32' });
    const pass = h('input', { id: 'acct-pass', type: 'password', autocomplete: 'new-password' });
    const err = h('div', { class: 'note bad', id: 'acct-error', hidden: true });
    const show = (text) => {
      err.textContent = text;
      err.hidden = false;
    };
    const go = (create) => async (e) => {
      e.preventDefault();
      err.hidden = true;
      const u = user.value.trim();
      if (create) {
        const problem = usernameProblem(u) || passwordProblem(pass.value);
        if (problem) return show(t('errorPrefix') + problem);
      }
      try {
        const next = await signIn(u, pass.value, create);
        onSession(next);
        navigate(`#/player/${encodeURIComponent(next.player)}`);
      } catch (x) {
        show(errorText(x));
      }
    };
    const up = h('button', { type: 'submit', class: 'primary', id: 'acct-sign-up' }, t('signUp'));
    const inn = h('button', { type: 'button', id: 'acct-sign-in' }, t('signIn'));
    up.addEventListener('click', go(true));
    inn.addEventListener('click', go(false));
    card.replaceChildren(
      h('h2', {}, t('account')),
      h('p', { class: 'muted' }, s && !s.account ? t('guestKeepsGames', { name: s.name }) : ''),
      h(
        'form',
        { id: 'acct-form' },
        h('label', { class: 'form-row' }, t('username'), user),
        h('label', { class: 'form-row' }, t('password'), pass),
        h('p', { class: 'muted' }, t('pwPolicy', { min: MIN_PASSWORD, max: MAX_PASSWORD })),
        err,
        h('div', { class: 'actions' }, up, inn),
      ),
    );
  }

  async function sessionsCard() {
    const s = currentSession();
    const list = h('div', { id: 'sessions' });
    const out = h('button', { type: 'button', id: 'log-out' }, t('logOut'));
    out.addEventListener('click', async () => {
      const next = await logOut();
      onSession(next);
      render();
    });
    card.replaceChildren(
      h('h2', {}, t('account')),
      h('p', {}, t('signedInAs', { name: s.name }), ' · ', h('a', { href: `#/player/${encodeURIComponent(s.player)}`, id: 'my-profile' }, t('profile'))),
      h('div', { class: 'actions' }, out),
      h('h2', {}, t('sessions')),
      list,
    );
    try {
      const sessions = await api.sessions();
      if (destroyed) return;
      list.replaceChildren(
        h(
          'table',
          { class: 'games' },
          h(
            'tbody',
            {},
            sessions.map((x) => {
              const revoke = h('button', { type: 'button', class: 'small', 'data-revoke': x.id }, x.current ? t('logOut') : t('revoke'));
              revoke.addEventListener('click', async () => {
                if (x.current) return out.click();
                try {
                  await api.revokeSession(x.id);
                  render();
                } catch (e) {
                  list.prepend(h('div', { class: 'note bad' }, errorText(e)));
                }
              });
              return h(
                'tr',
                { 'data-session': x.id },
                h('td', {}, `${t('since')} ${when(x.created_ms)}`, x.current ? h('strong', {}, ` · ${t('thisSession')}`) : ''),
                h('td', { class: 'muted' }, `${t('expires')} ${when(x.expires_ms)}`),
                h('td', {}, revoke),
              );
            }),
          ),
        ),
      );
    } catch (e) {
      list.textContent = errorText(e);
    }
  }

  function render() {
    const s = currentSession();
    if (s && s.account) sessionsCard();
    else authForm();
  }
  render();
  return {
    destroy() {
      destroyed = true;
    },
  };
}

// ---------------------------------------------------------------------------
// #/player/ID
// ---------------------------------------------------------------------------

const SVG = 'http://www.w3.org/2000/svg';
function s(tag, attrs = {}, ...children) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  for (const c of children) e.appendChild(typeof c === 'string' ? document.createTextNode(c) : c);
  return e;
}

/** A small line chart of a rating history (points: {rating}), starting at 1500. */
export function ratingChart(history) {
  const W = 320;
  const H = 120;
  const pad = 28;
  const values = [1500, ...history.map((p) => p.rating)];
  let lo = Math.min(...values);
  let hi = Math.max(...values);
  if (hi - lo < 40) {
    lo -= 20;
    hi += 20;
  }
  const x = (i) => pad + ((W - pad - 6) * i) / Math.max(1, values.length - 1);
  const y = (v) => 6 + ((H - 18) * (hi - v)) / (hi - lo);
  const path = values.map((v, i) => `${i ? 'L' : 'M'}${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(' ');
  return s(
    'svg',
    { class: 'rating-chart', viewBox: `0 0 ${W} ${H}`, width: W, height: H, role: 'img', 'data-points': values.length },
    s('title', {}, t('ratingHistory')),
    s('line', { x1: pad, y1: y(hi), x2: pad, y2: H - 12, stroke: '#bbb' }),
    s('line', { x1: pad, y1: H - 12, x2: W - 4, y2: H - 12, stroke: '#bbb' }),
    s('text', { x: 2, y: y(hi) + 4, 'font-size': 10, fill: '#666' }, String(Math.round(hi))),
    s('text', { x: 2, y: y(lo) + 4, 'font-size': 10, fill: '#666' }, String(Math.round(lo))),
    s('path', { d: path, fill: 'none', stroke: '#a3342a', 'stroke-width': 2 }),
    ...values.map((v, i) => s('circle', { cx: x(i).toFixed(1), cy: y(v).toFixed(1), r: 2.5, fill: '#a3342a' }, s('title', {}, String(v)))),
  );
}

export function mountPlayer(root, id) {
  clear(root);
  // Every variant, or one: its ratings, results by seat and games.
  const variantSel = h('select', { id: 'profile-variant' }, h('option', { value: '' }, t('allVariants')), variants().map((v) => h('option', { value: v.key }, variantName(v.key))));
  const page = h('div', { class: 'profile', id: 'profile', 'data-player': id }, h('p', { class: 'muted' }, '…'));
  root.appendChild(h('div', { class: 'actions' }, variantSel));
  root.appendChild(page);
  variantSel.addEventListener('change', () => load());
  let seq = 0;
  function load() {
    const mine = ++seq;
    const variant = variantSel.value;
    page.dataset.loaded = 'false';
    page.dataset.variant = variant;
    api
      .player(id, variant)
      .then((p) => {
        if (mine !== seq) return;
        const ratings = p.ratings.length
          ? p.ratings.map((r) =>
              h(
                'div',
                { class: 'rating-card', 'data-variant': r.variant, 'data-class': r.class },
                h('h3', {}, `${variantName(r.variant)} · ${t(`class_${r.class}`)}`),
                h(
                  'p',
                  {},
                  h('strong', { class: 'rating-value' }, ratingText(r.current)),
                  ` ± ${r.current.deviation} · ${t('ratedGames', { n: r.games })}`,
                  r.rank ? ` · ${t('rankOf', { n: r.rank })}` : r.current.provisional ? ` · ${t('provisional')}` : '',
                ),
                ratingChart(r.history),
              ),
            )
          : [h('p', { class: 'muted' }, t('noRatings'))];
        const tally = h(
          'table',
          { class: 'games', id: 'seat-tally' },
          h('thead', {}, h('tr', {}, h('th', {}, ''), h('th', {}, t('outcome_win')), h('th', {}, t('outcome_draw')), h('th', {}, t('outcome_loss')))),
          h(
            'tbody',
            {},
            SIDES.map((x, i) =>
              h('tr', { 'data-seat': x }, h('td', {}, h('span', { class: `dot dot-${x}` }), sideName(x, true)), h('td', {}, p.seats[i].win), h('td', {}, p.seats[i].draw), h('td', {}, p.seats[i].loss)),
            ),
          ),
        );
        const games = p.games.length
          ? h(
              'table',
              { class: 'games', id: 'profile-games' },
              h(
                'tbody',
                {},
                p.games.map((g) =>
                  h(
                    'tr',
                    { 'data-game': g.game },
                    h('td', {}, h('div', {}, variantName(g.variant)), h('div', { class: 'muted' }, `${tcLabel(g.time_control)} · ${g.rated ? t('rated') : t('casual')}`)),
                    h('td', {}, SIDES.map((x, i) => h('div', {}, h('span', { class: `dot dot-${x}` }), g.names[i] || t('free')))),
                    h(
                      'td',
                      {},
                      h('div', {}, h('span', { class: `dot dot-${g.side}` }), g.outcome ? t(`outcome_${g.outcome}`) : t(`phase_${g.phase}`)),
                      g.rating_change != null ? h('div', { class: 'rating-delta' }, signed(g.rating_change)) : '',
                    ),
                    h('td', {}, h('a', { href: g.phase === 'finished' ? `#/r/${g.game}` : `#/g/${g.game}` }, g.phase === 'finished' ? t('replay') : t('watch'))),
                  ),
                ),
              ),
            )
          : h('p', { class: 'muted' }, t('none'));
        page.replaceChildren(
          h('h2', { id: 'profile-name' }, p.name, p.account ? '' : h('span', { class: 'muted' }, ` (${p.bot ? t('botName', { n: p.bot }) : t('guest')})`)),
          h('p', { class: 'muted' }, `${t('joined')} ${when(p.created_ms)}`),
          h('section', { class: 'card' }, h('h2', {}, t('ratings')), ...ratings),
          h('section', { class: 'card' }, h('h2', {}, t('bySeat')), tally),
          h('section', { class: 'card' }, h('h2', {}, t('games')), games),
        );
        page.dataset.loaded = 'true';
      })
      .catch((e) => page.replaceChildren(h('p', { class: 'note bad' }, errorText(e))));
  }
  load();
  return { destroy() {} };
}

// ---------------------------------------------------------------------------
// #/leaderboard
// ---------------------------------------------------------------------------

export function mountLeaderboard(root, params) {
  clear(root);
  const variantSel = h('select', { id: 'lb-variant' }, variants().map((v) => h('option', { value: v.key }, variantName(v.key))));
  const classSel = h('select', { id: 'lb-class' }, CLASSES.map((c) => h('option', { value: c }, t(`class_${c}`))));
  variantSel.value = params.get('variant') || 'sanguo';
  classSel.value = params.get('class') || 'blitz';
  const list = h('div', { id: 'leaderboard' });
  root.appendChild(
    h(
      'section',
      { class: 'card narrow' },
      h('h2', {}, t('leaderboard')),
      h('div', { class: 'actions' }, variantSel, classSel),
      list,
    ),
  );
  let seq = 0;
  async function load() {
    const mine = ++seq;
    try {
      const rows = await api.leaderboard(variantSel.value, classSel.value);
      if (mine !== seq) return;
      list.replaceChildren(
        rows.length
          ? h(
              'table',
              { class: 'games' },
              h(
                'tbody',
                {},
                rows.map((r) =>
                  h(
                    'tr',
                    { 'data-player': r.player },
                    h('td', {}, `${r.rank}.`),
                    h('td', {}, h('a', { href: `#/player/${encodeURIComponent(r.player)}` }, r.name)),
                    h('td', {}, h('strong', {}, ratingText(r.rating)), ` ± ${r.rating.deviation}`),
                    h('td', { class: 'muted' }, t('ratedGames', { n: r.games })),
                  ),
                ),
              ),
            )
          : h('p', { class: 'muted' }, t('noLeaders')),
      );
    } catch (e) {
      list.textContent = errorText(e);
    }
  }
  variantSel.addEventListener('change', load);
  classSel.addEventListener('change', load);
  load();
  return { destroy() {} };
}

// ---------------------------------------------------------------------------
// A finished rated game's rating changes
// ---------------------------------------------------------------------------

/** Lines "W name 1500 → 1523 (+23)" from a record's `rating_changes`. */
export function ratingLines(changes, seats) {
  if (!changes || !changes.length) return null;
  return h(
    'div',
    { class: 'rating-changes', id: 'rating-changes' },
    h('strong', {}, t('ratingChanges')),
    changes.map((c) => {
      const nm = seats && seats[SIDES.indexOf(c.side)] ? seats[SIDES.indexOf(c.side)].name : '';
      return h(
        'div',
        { 'data-side': c.side, 'data-delta': c.after.rating - c.before.rating },
        h('span', { class: `dot dot-${c.side}` }),
        `${nm} ${ratingText(c.before)} → ${ratingText(c.after)} (${signed(c.after.rating - c.before.rating)})`,
      );
    }),
  );
}

const shownChanges = new Map();
/** The rating changes of a finished rated game, fetched once per game: an element kept across re-renders. */
export function ratingChangesFor(id) {
  let el = shownChanges.get(id);
  if (el) return el;
  el = h('div', { class: 'note good' }, t('ratingPending'));
  shownChanges.set(id, el);
  const fill = (tries) =>
    api
      .record(id)
      .then((r) => {
        const lines = ratingLines(r.rating_changes, r.seats);
        if (lines) el.replaceChildren(lines);
        else if (tries > 0) setTimeout(() => fill(tries - 1), 1000);
        else el.hidden = true;
      })
      .catch(() => (el.hidden = true));
  fill(3);
  return el;
}

// ---------------------------------------------------------------------------
// Quick pairing (lobby card)
// ---------------------------------------------------------------------------

/** After this long at a tile, a game against two bots is offered instead (casual). */
export const BOT_OFFER_MS = 30000;

/** The quick-pairing tiles: press one, wait for two more players, land in the game. */
export function pairingCard(navigate) {
  const clocks = new Map();
  const tilesEl = h('div', { class: 'tiles', id: 'pairing-tiles' });
  const stateEl = h('div', { id: 'pairing-state', class: 'muted' });
  const card = h('section', { class: 'card', id: 'pairing' }, h('h2', {}, t('quickPairing')), tilesEl, stateEl);
  let timer = null;
  let destroyed = false;
  let waitingAt = null;

  function show(st) {
    if (st.state === 'matched') {
      waitingAt = null;
      navigate(`#/g/${st.game}`);
      return;
    }
    waitingAt = st.state === 'waiting' ? st.tile || waitingAt : null;
    for (const b of tilesEl.querySelectorAll('[data-tile]')) b.classList.toggle('on', b.dataset.tile === waitingAt);
    if (!waitingAt) {
      stateEl.replaceChildren(currentSession() && currentSession().account ? t('pairingRated') : t('pairingCasual'));
      return;
    }
    const cancel = h('button', { type: 'button', class: 'small', id: 'pairing-cancel' }, t('cancel'));
    cancel.addEventListener('click', async () => {
      await api.leavePairing().catch(() => null);
      waitingAt = null;
      show({ state: 'idle' });
    });
    stateEl.replaceChildren(t('pairingWaiting', { tile: waitingAt, s: Math.round((st.waited_ms || 0) / 1000) }), ' ', cancel);
    if ((st.waited_ms || 0) >= BOT_OFFER_MS && clocks.has(waitingAt)) {
      const tile = waitingAt;
      const bots = h('button', { type: 'button', class: 'small primary', id: 'pairing-bots' }, t('pairingBots'));
      bots.addEventListener('click', async () => {
        try {
          await api.leavePairing().catch(() => null);
          waitingAt = null;
          const snap = await api.createGame({ time_control: clocks.get(tile), bots: { B: 2, Y: 2 } });
          navigate(`#/g/${snap.id}?seat=W`);
        } catch (e) {
          stateEl.textContent = errorText(e);
        }
      });
      stateEl.append(h('div', {}, t('pairingBotOffer'), ' ', bots));
    }
  }

  async function poll() {
    clearTimeout(timer);
    if (destroyed) return;
    try {
      const tiles = await api.pairingTiles();
      if (destroyed) return;
      tilesEl.replaceChildren(
        ...tiles.map((x) => {
          clocks.set(x.key, x.time_control);
          const b = h('button', { type: 'button', class: 'tile', 'data-tile': x.key }, h('strong', {}, x.key), h('span', { class: 'muted' }, t(`class_${x.class}`)), h('span', { class: 'muted' }, t('waitingN', { n: x.waiting })));
          b.addEventListener('click', async () => {
            try {
              show(await api.seek(x.key));
              clearTimeout(timer);
              timer = setTimeout(poll, 1000);
            } catch (e) {
              stateEl.textContent = errorText(e);
            }
          });
          return b;
        }),
      );
      show(await api.pairing());
    } catch {
      /* try again */
    }
    if (!destroyed) timer = setTimeout(poll, waitingAt ? 1000 : 5000);
  }
  poll();
  return {
    card,
    destroy() {
      destroyed = true;
      clearTimeout(timer);
    },
  };
}

// ---------------------------------------------------------------------------
// Open seeks in the lobby (a rating range, like lichess's lobby)
// ---------------------------------------------------------------------------

/** The clocks a seek may take (as quick pairing's tiles). */
const SEEK_CLOCKS = { '1+0': [60, 0], '3+2': [180, 2], '5+3': [300, 3], '10+5': [600, 5], '15+10': [900, 10], '30+0': [1800, 0] };
/** Rating ranges offered: points below and above one's own rating (0: anyone). */
const SEEK_RANGES = [0, 100, 200, 300, 500, 800];

/**
 * The lobby's seeks card: post a seek (variant, clock, rated or casual, a
 * rating range), the open seeks with who is in them, "join" greyed out with
 * the reason where the server says this player may not take one, "cancel" /
 * "leave" on one's own. When a seek fills, its game opens.
 */
export function seeksCard(navigate) {
  const variantSel = h('select', { id: 'seek-variant' }, (variants().length ? variants() : [{ key: 'sanguo', playable: true }]).filter((v) => v.playable).map((v) => h('option', { value: v.key }, variantName(v.key))));
  const clockSel = h('select', { id: 'seek-clock' }, Object.keys(SEEK_CLOCKS).map((k) => h('option', { value: k, selected: k === '10+5' }, k)));
  const rated = h('input', { type: 'checkbox', id: 'seek-rated' });
  const rangeSel = h('select', { id: 'seek-range' }, SEEK_RANGES.map((r) => h('option', { value: String(r) }, r ? `±${r}` : t('seekAnyone'))));
  const post = h('button', { type: 'submit', class: 'small primary', id: 'seek-post' }, t('seekPost'));
  const errEl = h('div', { class: 'note bad', id: 'seek-error', hidden: true });
  const listEl = h('div', { id: 'seek-list' });
  const form = h(
    'form',
    { id: 'seek-form', class: 'actions seek-form' },
    variantSel,
    clockSel,
    h('label', { class: 'inline' }, rated, t('rated')),
    h('label', { class: 'inline' }, t('seekRange'), ' ', rangeSel),
    post,
  );
  const card = h('section', { class: 'card', id: 'seeks' }, h('h2', {}, t('seeks')), h('p', { class: 'muted' }, t('seeksHelp')), form, errEl, listEl);
  let timer = null;
  let destroyed = false;
  const fail = (e) => {
    errEl.textContent = errorText(e);
    errEl.hidden = false;
  };
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    errEl.hidden = true;
    const me = currentSession();
    if (rated.checked && !(me && me.account)) return fail({ code: 'rated_needs_account' });
    const [base, inc] = SEEK_CLOCKS[clockSel.value];
    const body = { variant: variantSel.value || 'sanguo', time_control: { base_ms: base * 1000, increment_ms: inc * 1000 }, rated: rated.checked };
    const r = Number(rangeSel.value);
    if (r) body.range = { below: r, above: r };
    try {
      await api.postSeek(body);
      poll();
    } catch (x) {
      fail(x);
    }
  });

  function row(k, mine) {
    const range = k.min_rating != null ? `${k.min_rating}–${k.max_rating}` : t('seekAnyone');
    let action;
    if (k.you.member) {
      const creator = k.players[0].player === (currentSession() || {}).player;
      action = h('button', { type: 'button', class: 'small', 'data-cancel': k.id }, creator ? t('cancel') : t('seekLeave'));
      action.addEventListener('click', async () => {
        try {
          await api.cancelSeek(k.id);
          poll();
        } catch (x) {
          fail(x);
        }
      });
    } else {
      // Greyed out with the reason when the server says no (outside the range, a guest at a rated seek, full).
      const why = k.you.refusal ? errorText(k.you.refusal) : '';
      action = h('button', { type: 'button', class: 'small primary', 'data-join': k.id, disabled: !k.you.may_join, title: why }, t('join'));
      action.addEventListener('click', async () => {
        errEl.hidden = true;
        try {
          const st = await api.joinSeek(k.id);
          if (st.state === 'matched') return navigate(`#/g/${st.game}`);
          poll();
        } catch (x) {
          fail(x);
        }
      });
      if (why) action = h('span', {}, action, h('div', { class: 'muted seek-refusal' }, why));
    }
    return h(
      'tr',
      { 'data-seek': k.id, class: k.you.may_join || k.you.member ? '' : 'greyed', 'data-mine': String(mine === k.id) },
      h('td', {}, h('div', {}, variantName(k.variant)), h('div', { class: 'muted' }, `${tcLabel(k.time_control)} · ${t(`class_${k.class}`)} · ${k.rated ? t('rated') : t('casual')}`)),
      h('td', {}, k.players.map((p) => h('div', {}, `${p.name} (${p.rating})`)), h('div', { class: 'muted' }, t('seekPlayers', { n: k.players.length }))),
      h('td', { class: 'seek-range' }, range),
      h('td', {}, action),
    );
  }

  async function poll() {
    clearTimeout(timer);
    if (destroyed) return;
    try {
      const st = await api.seeks();
      if (destroyed) return;
      if (st.matched) return navigate(`#/g/${st.matched.game}`);
      listEl.replaceChildren(st.seeks.length ? h('table', { class: 'games' }, h('tbody', {}, st.seeks.map((k) => row(k, st.mine)))) : h('p', { class: 'muted' }, t('seeksNone')));
    } catch {
      /* try again */
    }
    if (!destroyed) timer = setTimeout(poll, 2000);
  }
  poll();
  return {
    card,
    destroy() {
      destroyed = true;
      clearTimeout(timer);
    },
  };
}
