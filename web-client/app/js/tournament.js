// Tournaments (docs/TOURNAMENTS.md): the list, registration by code, creating
// one (organizers need an account), and a tournament's page — pairings,
// standings and the round's live boards for everyone; round control, arbiter
// actions and exports for the organizer. Everything comes from the HTTP API,
// refreshed every few seconds.

import { t, sideName, errorText, variantName } from './i18n.js';
import { api, currentSession, signIn } from './api.js';
import { SIDES } from './geometry.js';
import { clientOf } from './clients.js';
import { Board } from './board.js';
import { h, clear, tcLabel, formatClock, describeResult } from './ui.js';
import { PRESETS } from './lobby.js';
import { variants } from './variants.js';

const REFRESH_MS = 3000;

function errorBox(id) {
  return h('div', { class: 'note bad', hidden: true, id });
}

function showError(el, err) {
  el.textContent = errorText(err);
  el.hidden = false;
}

function button(label, attrs, onClick) {
  const b = h('button', { type: 'button', class: 'small', ...attrs }, label);
  b.addEventListener('click', onClick);
  return b;
}

/** `YYYY-MM-DDTHH:MM` in local time, for a datetime-local input. */
function localInput(ms) {
  if (ms == null) return '';
  const d = new Date(ms);
  const p = (n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;
}

/**
 * The tournament settings form — everything `POST /api/tournaments` takes —
 * for creating one (`initial` absent: the defaults) and for the organizer's
 * edit before round 1 (`initial`: the tournament's settings, filled in).
 * Element ids are `${prefix}-…`. `onSubmit(body)` may throw: its error is
 * shown under the form, translated.
 */
function settingsForm({ prefix, initial, submitLabel, onSubmit, extra = [] }) {
  const id = (k) => `${prefix}-${k}`;
  const num = (k, value) => h('input', { id: id(k), type: 'number', min: '0', step: '1', value: String(value), style: 'width:4em' });
  const dec = (k, value) => h('input', { id: id(k), type: 'number', min: '0', step: 'any', value: String(value), style: 'width:5em' });
  const init = initial || {};
  const tc0 = init.time_control;
  const presetKey = tc0 ? Object.keys(PRESETS).find((k) => JSON.stringify(PRESETS[k]) === JSON.stringify(tc0)) || 'custom' : 'fischer';
  const name = h('input', { id: id('name'), required: true, maxlength: '80', value: init.name || '' });
  const variantSel = h(
    'select',
    { id: id('variant') },
    (variants().length ? variants() : [{ key: 'sanguo', playable: true }]).map((v) =>
      h('option', { value: v.key, disabled: !v.playable, selected: (init.variant || 'sanguo') === v.key }, v.playable ? variantName(v.key) : `${variantName(v.key)} (${t('comingSoon')})`),
    ),
  );
  const preset = h('select', { id: id('preset') }, ['fischer', 'byoyomi', 'permove', 'custom'].map((k) => h('option', { value: k, selected: k === presetKey }, t(`preset_${k}`))));
  // everything the API takes: a custom clock, the direction, the registration window, the start, the grace
  const cBase = dec('c-base', tc0 ? tc0.base_ms / 60000 : 10);
  const cInc = dec('c-inc', tc0 ? tc0.increment_ms / 1000 : 5);
  const cPer = dec('c-permove', tc0 && tc0.per_move_ms ? tc0.per_move_ms / 1000 : 0);
  const cPeriods = num('c-periods', tc0 && tc0.byoyomi ? tc0.byoyomi.periods : 0);
  const cPeriod = dec('c-period', tc0 && tc0.byoyomi ? tc0.byoyomi.period_ms / 1000 : 30);
  const customTc = h(
    'div',
    { class: 'form-grid', id: id('custom-tc'), hidden: presetKey !== 'custom' },
    h('label', { class: 'form-row' }, t('baseMin'), cBase),
    h('label', { class: 'form-row' }, t('incrementS'), cInc),
    h('label', { class: 'form-row' }, t('perMoveS'), cPer),
    h('label', { class: 'form-row' }, t('byoPeriods'), cPeriods),
    h('label', { class: 'form-row' }, t('byoSeconds'), cPeriod),
  );
  preset.addEventListener('change', () => (customTc.hidden = preset.value !== 'custom'));
  const direction = h('select', { id: id('direction') }, ['ccw', 'cw'].map((d) => h('option', { value: d, selected: (init.direction || 'ccw') === d }, t(d))));
  const when = (k, ms) => h('input', { id: id(k), type: 'datetime-local', value: localInput(ms) });
  const regOpens = when('reg-opens', initial ? init.registration_opens_ms : null);
  const regCloses = when('reg-closes', init.registration_closes_ms);
  const starts = when('starts', init.starts_ms);
  const grace = dec('grace', init.grace_ms != null ? init.grace_ms / 1000 : 60);
  const rr = init.pairing && init.pairing.kind === 'round_robin';
  const system = h('select', { id: id('system') }, h('option', { value: 'swiss' }, t('swiss')), h('option', { value: 'round_robin', selected: rr }, t('roundRobin')));
  const rounds = num('rounds', init.rounds || 5);
  const group = num('group', rr ? init.pairing.group_size : 6);
  const sc0 = init.scoring || { win: 3, draw: 1, loss: 0, bye: 1 };
  const sc = ['win', 'draw', 'loss', 'bye'].map((k) => num(k, sc0[k]));
  // What the players a round leaves without a table do: score the bye points, or play bots.
  const bye0 = init.byes && init.byes.kind === 'bot' ? String(init.byes.level) : 'points';
  const byes = h(
    'select',
    { id: id('byes') },
    h('option', { value: 'points' }, t('byePoints')),
    ...[1, 2, 3].map((n) => h('option', { value: String(n), selected: bye0 === String(n) }, t('byeBot', { n }))),
  );
  // A rated tournament: accounts only, its games rated (a bot table's game stays casual).
  const rated = h('input', { type: 'checkbox', id: id('rated'), checked: !!init.rated });
  const cerr = errorBox(id('error'));
  const form = h(
    'form',
    { id: prefix === 'tn' ? 'tournament-form' : id('form') },
    h('label', { class: 'form-row' }, t('tName'), name),
    h('label', { class: 'form-row' }, t('variant'), variantSel),
    h('label', { class: 'form-row' }, t('timeControl'), preset),
    customTc,
    h('label', { class: 'form-row' }, t('direction'), direction),
    h('label', { class: 'form-row' }, t('regOpens'), regOpens),
    h('label', { class: 'form-row' }, t('regCloses'), regCloses),
    h('label', { class: 'form-row' }, t('startsAt'), starts),
    h('label', { class: 'form-row' }, t('graceS'), grace),
    h('label', { class: 'form-row' }, t('pairing'), system),
    h('label', { class: 'form-row' }, t('rounds'), rounds),
    h('label', { class: 'form-row' }, t('groupSize'), group),
    h('div', { class: 'form-row' }, h('span', {}, t('scoring')), ...sc),
    h('label', { class: 'form-row' }, t('byeFill'), byes),
    h('div', { class: 'form-row' }, h('label', { class: 'inline' }, rated, t('ratedTournament'))),
    ...extra,
    cerr,
    h('button', { type: 'submit', class: 'primary', id: prefix === 'tn' ? 'tn-create' : id('submit') }, submitLabel),
  );
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    cerr.hidden = true;
    const n = (el) => Number(el.value) || 0;
    let tc = PRESETS[preset.value];
    if (preset.value === 'custom') {
      tc = { base_ms: Math.round(n(cBase) * 60000), increment_ms: Math.round(n(cInc) * 1000) };
      if (n(cPer) > 0) tc.per_move_ms = Math.round(n(cPer) * 1000);
      if (n(cPeriods) > 0) tc.byoyomi = { periods: Math.round(n(cPeriods)), period_ms: Math.round(n(cPeriod) * 1000) };
    }
    const ms = (el) => (el.value ? new Date(el.value).getTime() : undefined);
    const body = {
      name: name.value,
      variant: variantSel.value || 'sanguo',
      time_control: tc,
      direction: direction.value,
      grace_ms: Math.round(n(grace) * 1000),
      registration_opens_ms: ms(regOpens),
      registration_closes_ms: ms(regCloses),
      starts_ms: ms(starts),
      pairing: system.value === 'swiss' ? { kind: 'swiss' } : { kind: 'round_robin', group_size: n(group) },
      scoring: { win: n(sc[0]), draw: n(sc[1]), loss: n(sc[2]), bye: n(sc[3]) },
    };
    if (system.value === 'swiss') body.rounds = n(rounds);
    body.byes = byes.value === 'points' ? { kind: 'points' } : { kind: 'bot', level: Number(byes.value) };
    body.rated = rated.checked;
    try {
      await onSubmit(body);
    } catch (x) {
      showError(cerr, x);
    }
  });
  return form;
}

/** `#/t`: tournaments, registration by code, a new tournament. */
export function mountTournaments(root, navigate) {
  clear(root);
  let destroyed = false;
  let timer = null;
  const err = errorBox('t-error');
  const codeInput = h('input', { id: 'reg-code', placeholder: t('code'), autocomplete: 'off' });
  const regForm = h('form', { id: 'register-form' }, h('div', { class: 'form-row' }, codeInput, h('button', { type: 'submit', class: 'primary' }, t('register'))));
  regForm.addEventListener('submit', async (e) => {
    e.preventDefault();
    err.hidden = true;
    try {
      const tt = await api.registerTournament(codeInput.value.trim());
      navigate(`#/t/${tt.id}`);
    } catch (x) {
      showError(err, x);
    }
  });

  const createCard = h('section', { class: 'card', id: 'create-tournament' });
  const listEl = h('div', { id: 'tournament-list' });
  root.appendChild(
    h(
      'div',
      { class: 'lobby' },
      h('div', {}, h('section', { class: 'card' }, h('h2', {}, t('registerCode')), regForm, err), createCard),
      h('section', { class: 'card' }, h('h2', {}, t('tournaments')), listEl),
    ),
  );

  function renderCreate() {
    clear(createCard);
    createCard.appendChild(h('h2', {}, t('newTournament')));
    const s = currentSession();
    if (!s || !s.account) {
      const user = h('input', { id: 'acct-user', autocomplete: 'username' });
      const pass = h('input', { id: 'acct-pass', type: 'password', autocomplete: 'current-password' });
      const aerr = errorBox('acct-error');
      const go = (create) => async () => {
        aerr.hidden = true;
        try {
          await signIn(user.value.trim(), pass.value, create);
          renderCreate();
          document.getElementById('me').textContent = currentSession().name;
        } catch (x) {
          showError(aerr, x);
        }
      };
      createCard.append(
        h('p', { class: 'muted' }, t('accountNeeded')),
        h('label', { class: 'form-row' }, t('username'), user),
        h('label', { class: 'form-row' }, t('password'), pass),
        aerr,
        h('div', { class: 'form-row' }, button(t('signUp'), { id: 'sign-up', class: 'small primary' }, go(true)), button(t('signIn'), { id: 'sign-in' }, go(false))),
      );
      return;
    }
    createCard.appendChild(
      settingsForm({
        prefix: 'tn',
        submitLabel: t('create'),
        onSubmit: async (body) => {
          const tt = await api.createTournament(body);
          navigate(`#/t/${tt.id}`);
        },
      }),
    );
  }
  renderCreate();

  async function refresh() {
    try {
      const list = await api.tournaments();
      if (destroyed) return;
      listEl.replaceChildren(
        list.length
          ? h(
              'table',
              { class: 'games' },
              h(
                'tbody',
                {},
                list.map((x) =>
                  h(
                    'tr',
                    { 'data-tournament': x.id },
                    h('td', {}, h('a', { href: `#/t/${x.id}` }, x.settings.name)),
                    h('td', {}, `${t(`status_${x.status}`)} · ${t('roundN', { n: x.round })}/${x.settings.rounds || '?'}`),
                    h('td', { class: 'muted' }, `${x.players.length} · ${tcLabel(x.settings.time_control)}`),
                  ),
                ),
              ),
            )
          : h('p', { class: 'muted' }, t('none')),
      );
    } catch {
      /* try again */
    }
    if (!destroyed) timer = setTimeout(refresh, REFRESH_MS);
  }
  refresh();
  return {
    destroy() {
      destroyed = true;
      clearTimeout(timer);
    },
  };
}

/** `#/t/ID[?code=CODE]`: one tournament. */
export function mountTournament(root, id, navigate, { code } = {}) {
  clear(root);
  let destroyed = false;
  let timer = null;
  const boards = new Map(); // game id -> {board, host}
  const err = errorBox('tp-error');
  const head = h('section', { class: 'card', id: 't-head' });
  const orgCard = h('section', { class: 'card', id: 't-organizer', hidden: true });
  const pairEl = h('section', { class: 'card', id: 't-pairings' });
  const standEl = h('section', { class: 'card', id: 't-standings' });
  const liveEl = h('section', { class: 'card', id: 't-live' });
  root.appendChild(h('div', { class: 'tournament', id: 'tournament' }, head, err, orgCard, h('div', { class: 'lobby' }, pairEl, standEl), liveEl));

  // The arbiter's inputs live outside the refreshed parts, so typing survives a refresh.
  const reason = h('input', { id: 'arb-reason', placeholder: t('reasonPrompt'), maxlength: '500', style: 'width:100%' });
  const arbSide = h('select', { id: 'arb-side' }, SIDES.map((s) => h('option', { value: s }, sideName(s, true))));
  const outcome = h(
    'select',
    { id: 'arb-outcome' },
    SIDES.map((s) => h('option', { value: s }, `${sideName(s, true)} ${t('outcome_win')}`)),
    h('option', { value: 'draw' }, t('outcome_draw')),
  );
  const pairBtn = button('', { id: 'pair-next', class: 'small primary' }, async () => {
    err.hidden = true;
    try {
      await api.pairRound(id);
      refresh(true);
    } catch (x) {
      showError(err, x);
    }
  });
  // Ending or deleting the event takes the reason typed for the arbiter (logged).
  const finishBtn = button(t('finishEvent'), { id: 'finish-event', class: 'small' }, async () => {
    err.hidden = true;
    try {
      await api.finishTournament(id, reason.value);
      refresh(true);
    } catch (x) {
      showError(err, x);
    }
  });
  const deleteBtn = button(t('deleteEvent'), { id: 'delete-event', class: 'small danger' }, async () => {
    err.hidden = true;
    try {
      await api.deleteTournament(id, reason.value);
      navigate('#/t');
    } catch (x) {
      showError(err, x);
    }
  });
  // The late-entry control: close registration now, or reopen it (logged with the reason).
  const regInfo = h('span', { id: 'reg-state' });
  const regClose = button(t('regCloseNow'), { id: 'reg-close', class: 'small' }, () => setRegistration(Date.now()));
  const regReopen = button(t('regReopen'), { id: 'reg-reopen', class: 'small' }, () => setRegistration(null));
  async function setRegistration(closes) {
    err.hidden = true;
    try {
      await api.setRegistration(id, closes, reason.value);
      refresh(true);
    } catch (x) {
      showError(err, x);
    }
  }
  // Before round 1 the settings can be edited: the create form, filled in, built
  // once when opened (a refresh does not wipe what is being typed).
  const editBox = h('div', { id: 'edit-box', hidden: true });
  let lastSettings = null;
  const editBtn = button(t('editEvent'), { id: 'edit-event', class: 'small' }, () => {
    if (!editBox.hidden) {
      editBox.hidden = true;
      return;
    }
    editBox.replaceChildren(
      h('p', { class: 'muted' }, t('editReasonHint')),
      settingsForm({
        prefix: 'te',
        initial: lastSettings,
        submitLabel: t('saveSettings'),
        onSubmit: async (body) => {
          await api.editTournament(id, body, reason.value);
          editBox.hidden = true;
          refresh(true);
        },
      }),
    );
    editBox.hidden = false;
  });
  const orgInfo = h('div', {});
  orgCard.append(
    h('h2', {}, t('organizer')),
    orgInfo,
    h('div', { class: 'form-row' }, pairBtn, finishBtn, editBtn, deleteBtn),
    h('div', { class: 'form-row' }, regInfo, regClose, regReopen),
    editBox,
    h('h3', {}, t('arbiter')),
    h('div', { class: 'form-row' }, reason),
    h('p', {}, arbSide, ' ', outcome),
    h(
      'p',
      { id: 'exports' },
      `${t('exports')}: `,
      ' ',
      h('a', { href: `/api/tournaments/${id}/standings.csv`, id: 'export-csv' }, 'standings.csv'),
      ' · ',
      h('a', { href: `/api/tournaments/${id}/standings`, target: '_blank' }, 'standings.json'),
      ' · ',
      h('a', { href: `/api/tournaments/${id}/rounds`, target: '_blank' }, 'rounds.json'),
      ' · ',
      h('a', { href: `/api/tournaments/${id}/games`, target: '_blank' }, 'games.json'),
      ' · ',
      h('a', { href: `/api/tournaments/${id}/log`, target: '_blank' }, t('log')),
    ),
  );

  async function arbiter(game, action) {
    err.hidden = true;
    try {
      await api.arbiter(id, game, action, reason.value);
      refresh(true);
    } catch (x) {
      showError(err, x);
    }
  }

  // A finished game's result corrected: the outcome chosen above, with the reason.
  function correctButton(game) {
    return h(
      'div',
      { class: 'arbiter-actions' },
      button(t('correctResult'), { 'data-act': 'correct' }, () => arbiter(game, adjudication())),
    );
  }

  const adjudication = () => {
    const o = outcome.value;
    const outcomes = SIDES.map((s) => (o === 'draw' ? 'draw' : o === s ? 'win' : 'loss'));
    return { kind: 'adjudicate', outcomes };
  };

  function arbiterButtons(game) {
    return h(
      'div',
      { class: 'arbiter-actions' },
      button(t('pause'), { 'data-act': 'pause' }, () => arbiter(game, { kind: 'pause' })),
      button(t('resumeClocks'), { 'data-act': 'resume' }, () => arbiter(game, { kind: 'resume' })),
      button(t('addTime'), { 'data-act': 'add_time' }, () => arbiter(game, { kind: 'add_time', side: arbSide.value, ms: 60000 })),
      button(t('adjudicate'), { 'data-act': 'adjudicate' }, () => arbiter(game, adjudication())),
      button(t('abort'), { 'data-act': 'abort' }, () => arbiter(game, { kind: 'abort' })),
    );
  }

  let withdrawAsked = false;
  function renderHead(tt) {
    const me = currentSession();
    const mine = me && tt.players.find((p) => p.player === me.player);
    const actions = [];
    const regClosed =
      (tt.settings.registration_closes_ms != null && tt.settings.registration_closes_ms <= Date.now()) ||
      (tt.round > 0 && tt.settings.pairing.kind === 'round_robin');
    if (!mine && code && tt.status !== 'finished' && regClosed) {
      actions.push(h('span', { class: 'note', id: 'register-closed' }, t('regClosed')));
    } else if (!mine && code && tt.status !== 'finished' && tt.settings.rated && !(me && me.account)) {
      // A rated tournament takes accounts only: a guest is told why, before it tries.
      actions.push(h('span', { class: 'note', id: 'register-rated' }, t('ratedTournamentNeedsAccount')));
    } else if (!mine && code && tt.status !== 'finished') {
      actions.push(
        button(t('register'), { id: 'register', class: 'small primary' }, async () => {
          err.hidden = true;
          try {
            await api.registerTournament(code);
            refresh(true);
          } catch (x) {
            showError(err, x);
          }
        }),
      );
    }
    if (mine && mine.withdrawn_after == null && tt.status !== 'finished') {
      if (!mine.checked_in) {
        actions.push(
          button(t('checkIn'), { id: 'check-in', class: 'small primary' }, async () => {
            try {
              await api.checkIn(id);
              refresh(true);
            } catch (x) {
              showError(err, x);
            }
          }),
        );
      }
      // Withdrawal is not undone by the player: it asks first (before round 1
      // it only takes the registration back).
      const confirmBox = h('div', { class: 'confirm-box', id: 'withdraw-confirm', hidden: !withdrawAsked });
      const yes = button(t('confirm'), { id: 'withdraw-yes', class: 'small danger' }, async () => {
        withdrawAsked = false;
        try {
          await api.withdraw(id);
          refresh(true);
        } catch (x) {
          showError(err, x);
        }
      });
      const no = button(t('cancel'), { id: 'withdraw-no', class: 'small' }, () => {
        withdrawAsked = false;
        confirmBox.hidden = true;
      });
      confirmBox.append(h('p', {}, t(tt.round === 0 ? 'unregisterConfirm' : 'withdrawConfirm')), h('div', { class: 'actions' }, yes, no));
      actions.push(
        button(t(tt.round === 0 ? 'unregister' : 'withdraw'), { id: 'withdraw' }, () => {
          withdrawAsked = true;
          confirmBox.hidden = false;
        }),
        confirmBox,
      );
    }
    const s = tt.settings;
    head.replaceChildren(
      h('h2', { id: 't-name' }, s.name),
      h(
        'p',
        { id: 't-status', 'data-status': tt.status, 'data-round': String(tt.round) },
        `${t(`status_${tt.status}`)} · ${t('roundN', { n: tt.round })}/${s.rounds || '?'} · ${s.pairing.kind === 'swiss' ? t('swiss') : `${t('roundRobin')} (${s.pairing.group_size})`} · ${tcLabel(s.time_control)}${s.rated ? ` · ${t('rated')}` : ''} · ${t(`dir_${s.direction}`)} · ${t('organizer')}: ${tt.organizer_name}`,
      ),
      h(
        'p',
        { class: 'muted', id: 't-players' },
        `${t('players')}: `,
        tt.players.flatMap((p, i) => [
          i ? ', ' : '',
          h('span', { 'data-player': p.player }, `${p.seed}. ${p.name}${p.checked_in ? ' ✓' : ''}${p.withdrawn_after != null ? ` (${t('withdrawn')})` : ''}`),
          ...(me && me.player === tt.organizer && tt.status !== 'finished' ? orgPlayerButton(p) : []),
        ]),
      ),
      h('div', { class: 'form-row' }, actions),
    );
    const isOrg = me && me.player === tt.organizer;
    orgCard.hidden = !isOrg;
    if (isOrg) {
      const link = `${location.origin}${location.pathname}#/t/${id}?code=${tt.code}`;
      orgInfo.replaceChildren(h('p', {}, `${t('inviteLink')}: `, h('code', { id: 'invite-link' }, link), ` · ${t('code')}: `, h('code', { id: 'invite-code' }, tt.code)));
      pairBtn.textContent = t('pairNext', { n: tt.round + 1 });
      pairBtn.disabled = tt.status === 'finished' || !tt.round_over;
      finishBtn.hidden = tt.round === 0 || tt.status === 'finished';
      finishBtn.disabled = !tt.round_over;
      deleteBtn.hidden = tt.round > 0;
      editBtn.hidden = tt.round > 0 || tt.status === 'finished';
      if (tt.round > 0) editBox.hidden = true;
      lastSettings = s;
      const now = Date.now();
      const closes = s.registration_closes_ms;
      const rrFixed = tt.round > 0 && s.pairing.kind === 'round_robin';
      const closed = rrFixed || (closes != null && closes <= now);
      regInfo.dataset.open = String(!closed && tt.status !== 'finished');
      regInfo.textContent =
        tt.status === 'finished'
          ? t('regClosed')
          : rrFixed
            ? t('regClosedRoundRobin')
            : closed
              ? t('regClosed')
              : closes != null
                ? t('regOpenUntil', { when: new Date(closes).toLocaleString() })
                : t('regOpen');
      regClose.hidden = closed || tt.status === 'finished';
      regReopen.hidden = !closed || rrFixed || tt.status === 'finished';
    }
    return isOrg;
  }

  // The organizer checks a player in, withdraws one, or takes a withdrawal back.
  function orgPlayerButton(p) {
    const back = p.withdrawn_after != null;
    const checkIn =
      !back && !p.checked_in
        ? button(t('checkIn'), { class: 'small', 'data-org-player': p.player, 'data-org-act': 'check-in' }, async () => {
            err.hidden = true;
            try {
              await api.checkInPlayer(id, p.player);
              refresh(true);
            } catch (x) {
              showError(err, x);
            }
          })
        : null;
    return [checkIn, orgWithdrawButton(p, back)];
  }

  function orgWithdrawButton(p, back) {
    return button(t(back ? 'reinstate' : 'withdraw'), { class: 'small', 'data-org-player': p.player, 'data-org-act': back ? 'reinstate' : 'withdraw' }, async () => {
      err.hidden = true;
      try {
        if (back) await api.reinstate(id, p.player);
        else await api.withdrawPlayer(id, p.player);
        refresh(true);
      } catch (x) {
        showError(err, x);
      }
    });
  }

  function renderPairings(tt, rounds, isOrg) {
    const blocks = [...rounds].reverse().map((r) =>
      h(
        'div',
        { class: 'round', 'data-round': String(r.round) },
        h('h3', {}, t('roundN', { n: r.round })),
        h(
          'table',
          { class: 'games' },
          h(
            'tbody',
            {},
            r.tables.map((tb) =>
              h(
                'tr',
                { 'data-table': String(tb.table), 'data-game': tb.game },
                h('td', {}, `${t('table')} ${tb.table}`),
                h('td', {}, SIDES.map((s, i) => h('div', {}, h('span', { class: `dot dot-${s}` }), tb.names[i]))),
                h('td', { class: 'result' }, tb.result ? describeResult(tb.result, tb.names.map((n) => ({ name: n }))) : t('inProgress')),
                h(
                  'td',
                  {},
                  h('a', { href: tb.result ? `#/r/${tb.game}` : `#/g/${tb.game}`, class: 'board-link' }, tb.result ? t('replay') : t('watch')),
                  isOrg && !tb.result && r.round === tt.round ? arbiterButtons(tb.game) : null,
                  isOrg && tb.result && tb.result.ending.kind !== 'annulled' ? correctButton(tb.game) : null,
                ),
              ),
            ),
            r.byes.map((b) => h('tr', { class: 'bye' }, h('td', {}, t('bye')), h('td', {}, b.name), h('td', {}, `+${b.points}`), h('td', {}))),
          ),
        ),
      ),
    );
    pairEl.replaceChildren(h('h2', {}, t('pairings')), ...(blocks.length ? blocks : [h('p', { class: 'muted' }, t('none'))]));
  }

  function renderStandings(st) {
    const cols = ['rank', 'name', 'pts', 'survival', 'opponents', 'wins', 'seatsWBY'];
    standEl.replaceChildren(
      h('h2', {}, t('standings')),
      h(
        'table',
        { class: 'games standings', id: 'standings' },
        h('thead', {}, h('tr', {}, cols.map((c) => h('th', {}, c === 'name' ? t('players') : t(c))))),
        h(
          'tbody',
          {},
          st.standings.flatMap((r, i) => [
            // a round robin ranks each group on its own
            r.group != null && (i === 0 || st.standings[i - 1].group !== r.group) ? h('tr', { class: 'group-head', 'data-group': String(r.group) }, h('th', { colspan: String(cols.length) }, t('groupN', { n: r.group }))) : null,
            h(
              'tr',
              { 'data-player': r.player, class: r.withdrawn ? 'muted' : '' },
              h('td', {}, String(r.rank)),
              h('td', {}, r.name),
              h('td', { class: 'points' }, String(r.points)),
              h('td', {}, String(r.survival)),
              h('td', {}, String(r.opponents)),
              h('td', {}, String(r.wins)),
              h('td', {}, r.seats.join('/')),
            ),
          ]),
        ),
      ),
    );
  }

  async function renderLive(tt, rounds) {
    const current = rounds.find((r) => r.round === tt.round);
    const live = current ? current.tables.filter((tb) => !tb.result) : [];
    const snaps = await Promise.all(live.map((tb) => api.game(tb.game).catch(() => null)));
    if (destroyed) return;
    const keep = new Set(live.map((tb) => tb.game));
    for (const g of [...boards.keys()]) if (!keep.has(g)) boards.delete(g);
    const cells = live.map((tb, i) => {
      const snap = snaps[i];
      let entry = boards.get(tb.game);
      // each board in its game system's drawing (the event's variant)
      const variant = (snap && snap.settings.variant) || 'sanguo';
      const V = clientOf(variant);
      if (entry && entry.board.variant !== variant) entry = null;
      if (!entry) {
        const host = h('div', { class: 'mini-board' });
        const board = new Board(host, { fade: false, variant });
        // One #board per page (the game's); the mini boards share its styles by class.
        board.svg.removeAttribute('id');
        board.svg.classList.add('mini');
        entry = { host, board };
        boards.set(tb.game, entry);
      }
      if (snap) entry.board.update({ placement: V.placement(snap.status), legal: new Map(), last: null, checked: [], interactive: false });
      const clocks = snap
        ? SIDES.map((s, k) => h('span', { class: `clock-mini${snap.status.clocks[k].running ? ' running' : ''}` }, h('span', { class: `dot dot-${V.colour(s)}` }), formatClock(snap.status.clocks[k].remaining_ms), ' '))
        : [];
      return h(
        'div',
        { class: 'live-table', 'data-game': tb.game, 'data-ply': snap ? String(snap.status.ply) : '', 'data-paused': snap ? String(!!snap.status.paused) : '' },
        h('div', {}, h('a', { href: `#/g/${tb.game}` }, `${t('table')} ${tb.table}`), snap && snap.status.paused ? ` · ${t('arbiter_pause')}` : ''),
        entry.host,
        h('div', { class: 'muted' }, clocks),
      );
    });
    liveEl.replaceChildren(h('h2', {}, `${t('liveGames')} — ${t('roundN', { n: tt.round })}`), h('div', { class: 'live-boards' }, cells.length ? cells : h('p', { class: 'muted' }, t('none'))));
  }

  let busy = false;
  async function refresh(now = false) {
    if (now) clearTimeout(timer);
    if (busy) return;
    busy = true;
    try {
      const [tt, rounds, st] = await Promise.all([api.tournament(id), api.rounds(id), api.standings(id)]);
      if (destroyed) return;
      const isOrg = renderHead(tt);
      renderPairings(tt, rounds, isOrg);
      renderStandings(st);
      await renderLive(tt, rounds);
    } catch (x) {
      if (x && x.status === 404) {
        showError(err, x);
        return;
      }
      console.warn('tournament refresh failed; trying again', x);
    } finally {
      busy = false;
    }
    if (!destroyed) timer = setTimeout(refresh, REFRESH_MS);
  }
  refresh();
  return {
    destroy() {
      destroyed = true;
      clearTimeout(timer);
    },
  };
}

/** The lobby's card of the player's tournament boards (filled by `refreshBoards`). */
export function boardsCard(navigate) {
  const el = h('div', { id: 'my-boards' });
  const card = h('section', { class: 'card', hidden: true, id: 'boards-card' }, h('h2', {}, t('yourBoards')), el);
  async function refreshBoards() {
    try {
      const list = await api.boards();
      card.hidden = !list.length;
      el.replaceChildren(
        ...list.map((b) => {
          const go = button(t('goToBoard'), { class: 'small primary', 'data-game': b.game }, () => navigate(`#/g/${b.game}`));
          return h('div', { class: 'form-row' }, `${b.name} · ${t('roundN', { n: b.round })} · ${t('table')} ${b.table} · ${sideName(b.side)} `, go);
        }),
      );
    } catch {
      card.hidden = true;
    }
  }
  return { card, refreshBoards };
}
