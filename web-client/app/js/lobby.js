// The lobby: create a game, the open games to join, the live games to watch,
// recently finished games to replay.

import { t, sideName, variantName, errorText } from './i18n.js';
import { api, currentSession } from './api.js';
import { SIDES } from './geometry.js';
import { h, clear, tcLabel, seatName } from './ui.js';
import { myGames, rememberCreated } from './game.js';
import { boardsCard } from './tournament.js';
import { variants } from './variants.js';
import { pairingCard, seeksCard } from './players.js';
import { anqiOptionsForm } from './anqi.js';
import { clientOf } from './clients.js';

export const PRESETS = {
  fischer: { base_ms: 600000, increment_ms: 5000 },
  byoyomi: { base_ms: 1200000, increment_ms: 0, byoyomi: { periods: 1, period_ms: 30000 } },
  permove: { base_ms: 1800000, increment_ms: 0, per_move_ms: 60000 },
};

export function mountLobby(root, navigate) {
  clear(root);
  let timer = null;
  let destroyed = false;

  const preset = h(
    'select',
    { id: 'preset', name: 'preset' },
    ['fischer', 'byoyomi', 'permove', 'custom'].map((k) => h('option', { value: k }, t(`preset_${k}`))),
  );
  const num = (id, label, value, step = '1') =>
    h('label', { class: 'form-row' }, label, h('input', { id, type: 'number', min: '0', step, value: String(value) }));
  const custom = h(
    'div',
    { class: 'form-grid', id: 'custom-tc', hidden: true },
    // fractions allowed: a custom clock takes whatever the server does (20 s main time: 0.3333 min)
    num('c-base', t('baseMin'), 10, 'any'),
    num('c-inc', t('incrementS'), 5, 'any'),
    num('c-permove', t('perMoveS'), 0, 'any'),
    num('c-byo-periods', t('byoPeriods'), 0),
    num('c-byo-secs', t('byoSeconds'), 30, 'any'),
  );
  preset.addEventListener('change', () => {
    custom.hidden = preset.value !== 'custom';
  });
  const radio = (name, value, label, checked) =>
    h('label', { class: 'inline' }, h('input', { type: 'radio', name, value, checked }), label);
  const seatSel = h('select', { id: 'my-seat' }, h('option', { value: '' }, t('anySeat')), SIDES.map((s) => h('option', { value: s }, sideName(s))));
  // Who sits where at creation: a person (anyone who joins) or a bot of a level.
  const botSels = SIDES.map((s) =>
    h(
      'select',
      { id: `bot-${s}`, 'data-bot-seat': s },
      h('option', { value: '' }, t('person')),
      [1, 2, 3].map((n) => h('option', { value: String(n) }, t('botLevel', { n }))),
    ),
  );
  const botsRow = h(
    'div',
    { class: 'form-row', id: 'bot-seats' },
    h('span', {}, t('seatBots')),
    SIDES.map((s, i) => h('label', { class: 'inline', 'data-seat-label': s }, h('span', { class: `dot dot-${s}` }), h('span', { class: 'seat-name' }, sideName(s, true)), ' ', botSels[i])),
  );
  const errorEl = h('div', { class: 'note bad', hidden: true, id: 'create-error' });
  // The game systems come from the server: the ones not playable yet are shown, disabled.
  const variantSel = h('select', { id: 'variant', name: 'variant' }, h('option', { value: 'sanguo' }, variantName('sanguo')));
  const filterSel = h('select', { id: 'variant-filter' }, h('option', { value: '' }, t('allVariants')));
  {
    const vs = variants();
    variantSel.replaceChildren(
      ...vs.map((v) => h('option', { value: v.key, disabled: !v.playable }, v.playable ? variantName(v.key) : `${variantName(v.key)} (${t('comingSoon')})`)),
    );
    filterSel.replaceChildren(h('option', { value: '' }, t('allVariants')), ...vs.map((v) => h('option', { value: v.key }, variantName(v.key))));
  }
  // 三国暗棋's own settings, shown when it is the chosen game
  const anqiForm = anqiOptionsForm();
  const showVariantOptions = () => (anqiForm.el.hidden = variantSel.value !== 'anqi');
  variantSel.addEventListener('change', showVariantOptions);
  // the seats are named in the chosen game's words (三国演弈棋: W 吴, B 魏, Y 蜀)
  variantSel.addEventListener('change', () => {
    const V = clientOf(variantSel.value);
    SIDES.forEach((s, i) => {
      seatSel.options[i + 1].textContent = V.sideName(s);
      const label = botsRow.querySelector(`[data-seat-label="${s}"]`);
      label.querySelector('.dot').className = `dot dot-${V.colour(s)}`;
      label.querySelector('.seat-name').textContent = V.sideName(s, true);
    });
  });
  filterSel.addEventListener('change', () => {
    clearTimeout(timer);
    refresh();
  });
  const form = h(
    'form',
    { id: 'create-form' },
    h('div', { class: 'form-row' }, h('label', { for: 'variant' }, t('variant')), variantSel),
    anqiForm.el,
    h('div', { class: 'form-row' }, h('label', { for: 'preset' }, t('timeControl')), preset),
    custom,
    h('div', { class: 'form-row' }, h('span', {}, t('direction')), radio('direction', 'ccw', t('ccw'), true), radio('direction', 'cw', t('cw'), false)),
    h('div', { class: 'form-row' }, radio('visibility', 'public', t('public'), true), radio('visibility', 'private', t('private'), false)),
    h('div', { class: 'form-row' }, h('label', { class: 'inline' }, h('input', { type: 'checkbox', id: 'players-chat', checked: true }), t('playersChat'))),
    h('div', { class: 'form-row' }, h('label', { class: 'inline' }, h('input', { type: 'checkbox', id: 'rated' }), t('ratedGame'))),
    botsRow,
    h('div', { class: 'form-row' }, h('label', { for: 'my-seat' }, t('yourSeat')), seatSel),
    errorEl,
    h('button', { type: 'submit', class: 'primary', id: 'create-btn' }, t('create')),
  );
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    errorEl.hidden = true;
    let tc;
    if (preset.value === 'custom') {
      const v = (id) => Number(document.getElementById(id).value) || 0;
      tc = { base_ms: Math.round(v('c-base') * 60000), increment_ms: Math.round(v('c-inc') * 1000) };
      if (v('c-permove') > 0) tc.per_move_ms = Math.round(v('c-permove') * 1000);
      if (v('c-byo-periods') > 0) tc.byoyomi = { periods: Math.round(v('c-byo-periods')), period_ms: Math.round(v('c-byo-secs') * 1000) };
    } else tc = PRESETS[preset.value];
    const body = {
      variant: variantSel.value || 'sanguo',
      time_control: tc,
      direction: form.querySelector('input[name=direction]:checked').value,
      public: form.querySelector('input[name=visibility]:checked').value === 'public',
      players_chat: document.getElementById('players-chat').checked,
    };
    if (body.variant === 'anqi') body.anqi = anqiForm.value();
    const bots = {};
    SIDES.forEach((s, i) => {
      if (botSels[i].value) bots[s] = Number(botSels[i].value);
    });
    if (Object.keys(bots).length) body.bots = bots;
    if (document.getElementById('rated').checked) {
      const me = currentSession();
      const why = !me || !me.account ? t('ratedNeedsAccount') : body.bots ? t('ratedNoBots') : null;
      if (why) {
        errorEl.textContent = why;
        errorEl.hidden = false;
        return;
      }
      body.rated = true;
    }
    if (seatSel.value && bots[seatSel.value]) {
      errorEl.textContent = t('botOnYourSeat');
      errorEl.hidden = false;
      return;
    }
    try {
      const snap = await api.createGame(body);
      rememberCreated(snap.id);
      const seat = seatSel.value;
      // Three bots: nothing to join, the creator watches.
      navigate(Object.keys(bots).length === 3 ? `#/g/${snap.id}` : `#/g/${snap.id}?seat=${seat || 'any'}`);
    } catch (err) {
      errorEl.textContent = err && err.code === 'bad_request' ? t('errorPrefix') + t('err_bad_clock') : errorText(err);
      errorEl.hidden = false;
    }
  });

  const boards = boardsCard(navigate);
  const pairing = pairingCard(navigate);
  const seeks = seeksCard(navigate);
  const mineEl = h('div', { id: 'my-games' });
  const mineCard = h('section', { class: 'card', hidden: true }, h('h2', {}, t('myGames')), mineEl);
  const openEl = h('div', { id: 'open-games' });
  const liveEl = h('div', { id: 'live-games' });
  const finEl = h('div', { id: 'finished-games' });
  root.appendChild(
    h(
      'div',
      { class: 'lobby', id: 'lobby' },
      h('section', { class: 'card' }, h('h2', {}, t('newGame')), form),
      h(
        'div',
        {},
        pairing.card,
        seeks.card,
        boards.card,
        mineCard,
        h('div', { class: 'form-row variant-filter' }, h('label', { for: 'variant-filter' }, t('showVariant')), filterSel),
        h('section', { class: 'card' }, h('h2', {}, t('openGames')), openEl),
        h('section', { class: 'card' }, h('h2', {}, t('liveGames')), liveEl),
        h('section', { class: 'card' }, h('h2', {}, t('finishedGames')), finEl),
      ),
    ),
  );

  function seatsCell(g) {
    return h(
      'td',
      {},
      SIDES.map((s, i) =>
        h(
          'div',
          g.seats[i] && g.seats[i].bot ? { class: 'seat-bot', 'data-bot': g.seats[i].bot } : {},
          h('span', { class: `dot dot-${clientOf(g.settings.variant).colour(s)}` }),
          g.seats[i] ? seatName(g.seats[i]) : h('span', { class: 'seat-free' }, t('free')),
        ),
      ),
    );
  }

  function table(games, actions) {
    if (!games.length) return h('p', { class: 'muted' }, t('none'));
    return h(
      'table',
      { class: 'games' },
      h(
        'tbody',
        {},
        games.map((g) =>
          h(
            'tr',
            { 'data-game': g.id },
            h(
              'td',
              {},
              h('div', { class: 'variant-name', 'data-variant': g.settings.variant || 'sanguo' }, variantName(g.settings.variant || 'sanguo')),
              h('div', {}, tcLabel(g.settings.time_control)),
              h('div', { class: 'muted' }, `${t(`dir_${g.settings.direction}`)} · ${t('plies', { n: g.ply })}${g.settings.rated ? ` · ${t('rated')}` : ''}`),
            ),
            seatsCell(g),
            h('td', {}, actions(g)),
          ),
        ),
      ),
    );
  }

  const link = (href, label, cls = '') => {
    const b = h('button', { type: 'button', class: `small ${cls}` }, label);
    b.addEventListener('click', () => navigate(href));
    return b;
  };

  async function refresh() {
    const filter = filterSel.value;
    try {
      const [open, live, fin] = await Promise.all(['open', 'live', 'finished'].map((p) => api.listGames(p, filter)));
      await boards.refreshBoards();
      const mine = (await Promise.all(myGames().map((gid) => api.game(gid).catch(() => null)))).filter((g) => g && g.phase !== 'finished');
      // gone, or the filter changed meanwhile: the refresh it started shows the lists
      if (destroyed || filter !== filterSel.value) return;
      mineCard.hidden = !mine.length;
      mineEl.replaceChildren(table(mine.map((g) => ({ ...g, ply: g.status.ply })), (g) => [link(`#/g/${g.id}`, t('resume'), 'primary')]));
      openEl.replaceChildren(
        table(open, (g) => [
          ...SIDES.filter((s, i) => !g.seats[i]).map((s) => link(`#/g/${g.id}?seat=${s}`, `${t('join')} ${clientOf(g.settings.variant).sideName(s, true)}`, 'primary')),
          link(`#/g/${g.id}`, t('watch')),
        ]),
      );
      liveEl.replaceChildren(table(live, (g) => [link(`#/g/${g.id}`, t('watch'))]));
      finEl.replaceChildren(table(fin.slice(0, 20), (g) => [link(`#/r/${g.id}`, t('replay'))]));
    } catch {
      /* try again shortly */
    }
    // one polling loop, even when a filter change started a refresh while another was running
    clearTimeout(timer);
    if (!destroyed) timer = setTimeout(refresh, 4000);
  }
  refresh();

  return {
    destroy() {
      destroyed = true;
      clearTimeout(timer);
      pairing.destroy();
      seeks.destroy();
    },
  };
}
