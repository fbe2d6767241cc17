// A live game: play (a seated player) or watch (a spectator) over the game's
// WebSocket. The server's `status` is the whole truth: the board, whose turn,
// the side to move's legal moves, clocks and counters. The client only keeps
// the last version `v` it holds, so that a reconnect gets exactly what it missed.

import { Board } from './board.js';
import { SIDES } from './geometry.js';
import { t, errorText } from './i18n.js';
import { api, currentSession, wsUrl, ApiError } from './api.js';
import { play, playMove } from './sound.js';
import { clientOf } from './clients.js';
import { h, clear, formatClock, clockFace, describeResult, reasonText, tcLabel, banner, seatName } from './ui.js';
import { ratingChangesFor } from './players.js';
import { anqiGamePart, anqiSeed } from './anqi.js';

const PROTOCOL = 1;

/** Games this browser plays in, newest first (the lobby offers to resume them). */
export function myGames() {
  try {
    return JSON.parse(localStorage.getItem('sanguo.mygames') || '[]');
  } catch {
    return [];
  }
}

/** Games this browser created (their free seats may take a bot). */
export function rememberCreated(id) {
  let list = [];
  try {
    list = JSON.parse(localStorage.getItem('sanguo.created') || '[]');
  } catch {
    list = [];
  }
  localStorage.setItem('sanguo.created', JSON.stringify([id, ...list.filter((g) => g !== id)].slice(0, 20)));
}

function iCreated(id) {
  try {
    return JSON.parse(localStorage.getItem('sanguo.created') || '[]').includes(id);
  } catch {
    return false;
  }
}

function rememberGame(id) {
  const list = [id, ...myGames().filter((g) => g !== id)].slice(0, 20);
  localStorage.setItem('sanguo.mygames', JSON.stringify(list));
}

export function mountGame(root, id, { seat } = {}) {
  const st = {
    id,
    v: null,
    game: null, // the Snapshot, kept up to date by events
    role: null,
    side: null,
    lastMove: null,
    checks: [],
    departures: [],
    notes: [], // transient notes {cls, text, until}
    chat: [],
    moveSides: [], // who played each move (from events, or the record after a snapshot)
    moveChars: [], // the moving piece's character, for the move list
    clockAt: performance.now(),
    graceAt: {}, // side -> performance.now() deadline
    confirm: null, // 'resign' | 'draw'
    error: null,
  };
  // the game system's hooks (clients.js): 三国象棋's until the snapshot names the variant
  let V = clientOf('sanguo');
  // 三国暗棋's own parts of the page (anqi.js: its disc board, panel, actions),
  // chosen once from the game's settings in start(); null otherwise.
  let vx = null;
  const sideName = (side, short) => (vx ? vx.sideName(side) : V.sideName(side, short));
  const dot = (side) => h('span', { class: `dot dot-${V.colour(side)}` });
  // for tests and debugging: the state, and a simulated network drop
  window.__sanguo = { state: st, drop: () => ws && ws.close() };
  let ws = null;
  let destroyed = false;
  let retry = 0;
  let retryTimer = null;
  let tick = null;
  let everConnected = false;
  let pingTimer = null;

  // ---- layout -------------------------------------------------------------
  clear(root);
  const boardWrap = h('div', { class: 'board-wrap' });
  const statusLine = h('div', { class: 'status-line', id: 'status-line', 'aria-live': 'polite' });
  const clocksEl = h('div', { class: 'clocks', id: 'clocks' });
  const variantEl = h('div', { id: 'variant-panel' });
  const notesEl = h('div', { class: 'notes', id: 'notes', 'aria-live': 'polite' });
  const inviteEl = h('div', { id: 'invite' });
  const actionsEl = h('div', { class: 'actions', id: 'actions' });
  const confirmEl = h('div', { id: 'confirm' });
  const movesEl = h('div', { class: 'movelist clickable', id: 'movelist' });
  // Browsing the moves during the game: the board shows an earlier position until "back to the game".
  const browseEl = h('div', { class: 'actions', id: 'browse-bar', hidden: true });
  const chatLog = h('div', { class: 'chat-log', id: 'chat-log' });
  const chatInput = h('input', { id: 'chat-input', maxlength: '500', autocomplete: 'off' });
  // after the game a player chooses: the other players, or the spectators (everyone)
  const chatChannelSel = h('select', { id: 'chat-channel', hidden: true }, h('option', { value: 'spectators' }, t('chatSpectators')), h('option', { value: 'players' }, t('chatPlayers')));
  const chatForm = h('form', { class: 'chat-form', id: 'chat-form' }, chatChannelSel, chatInput, h('button', { type: 'submit' }, t('send')));
  const chatTitle = h('h2', {}, t('chat'));
  const flipBtn = h('button', { type: 'button', class: 'small', id: 'flip-btn' }, '⟳ ' + t('flip'));
  const coordsBtn = h('button', { type: 'button', class: 'small', id: 'coords-btn', 'aria-pressed': 'false' }, t('coords'));
  // phones: a bigger board in a scrolling frame, so that points are a finger apart
  const zoomBtn = h('button', { type: 'button', class: 'small', id: 'zoom-btn', 'aria-pressed': 'false' }, '⊕ ' + t('zoom'));
  zoomBtn.addEventListener('click', () => {
    const on = !boardWrap.classList.contains('zoomed');
    boardWrap.classList.toggle('zoomed', on);
    zoomBtn.setAttribute('aria-pressed', String(on));
    // start at the viewer's own side (the bottom middle)
    if (on) boardWrap.scrollTo({ left: (boardWrap.scrollWidth - boardWrap.clientWidth) / 2, top: boardWrap.scrollHeight });
  });
  const gameEl = h(
    'div',
    { class: 'game', id: 'game', 'data-game': id },
    h('div', { class: 'board-col' }, boardWrap),
    h(
      'div',
      { class: 'panel' },
      h('div', { class: 'actions' }, h('a', { href: '#/' }, t('toLobby')), h('span', { class: 'spacer' }), zoomBtn, coordsBtn, flipBtn),
      statusLine,
      clocksEl,
      variantEl,
      notesEl,
      inviteEl,
      actionsEl,
      confirmEl,
      h('h2', {}, t('moves')),
      browseEl,
      movesEl,
      h('div', { class: 'chat-box' }, chatTitle, chatLog, chatForm),
    ),
  );
  root.appendChild(gameEl);

  const newBoard = (variant) => new Board(boardWrap, { variant, onMove: (from, to) => sendMove(from, to), onRefused: (from, to) => explainRefusal(from, to) });
  let board = newBoard('sanguo');
  // the snapshot names the game system: its board replaces the first one
  function useVariant(variant) {
    const key = variant || 'sanguo';
    if (vx) return; // 三国暗棋 draws its own board (anqi.js)
    if (V.key === key && board.variant === key) return;
    V = clientOf(key);
    const coords = board.coords;
    board.svg.remove();
    board = newBoard(key);
    board.setCoords(coords);
    gameEl.dataset.variant = key;
    if (st.side) board.setView(V.view(st.side));
  }

  flipBtn.addEventListener('click', () => {
    const views = board.desc.views.map((v) => v.side);
    board.setView(views[(views.indexOf(board.view) + 1) % views.length]);
  });
  // point names on the board, as the move list writes them (remembered)
  const setCoords = (on) => {
    board.setCoords(on);
    coordsBtn.setAttribute('aria-pressed', String(on));
    localStorage.setItem('sanguo.coords', on ? '1' : '0');
  };
  setCoords(localStorage.getItem('sanguo.coords') === '1');
  coordsBtn.addEventListener('click', () => setCoords(!board.coords));

  chatForm.addEventListener('submit', (e) => {
    e.preventDefault();
    const text = chatInput.value.trim();
    if (!text) return;
    send({ type: 'chat', channel: chatChannel(), text });
    chatInput.value = '';
  });

  // ---- connection ---------------------------------------------------------
  function send(msg) {
    if (ws && ws.readyState === WebSocket.OPEN) {
      ws.send(JSON.stringify(msg));
      return true;
    }
    return false;
  }

  async function start() {
    if (seat) {
      try {
        // 三国暗棋: the seat's seed for the deal goes with the join
        const snap = await api.game(id).catch(() => null);
        const seed = snap && snap.settings.variant === 'anqi' ? anqiSeed(id) : undefined;
        await api.joinGame(id, seat === 'any' ? null : seat, seed);
      } catch (e) {
        if (e instanceof ApiError && e.code === 'seat_taken') st.error = t('seatTaken');
        else if (e instanceof ApiError && e.code === 'already_seated') st.error = null;
        else if (e instanceof ApiError && e.code === 'not_found') st.error = t('notFound');
        else st.error = errorText(e);
      }
    }
    // A wrong link: say so and lead back, instead of reconnecting forever.
    try {
      const snap = await api.game(id);
      // 三国暗棋 brings its own board and panel (anqi.js); every other game
      // system is drawn here through its hooks (clients.js)
      if (snap.settings.variant === 'anqi' && !vx) {
        V = clientOf('anqi');
        board.svg.remove();
        vx = anqiGamePart({ host: boardWrap, send, note, onRefused: () => explainRefusal(null, null) });
        board = vx.board;
        gameEl.dataset.variant = 'anqi';
        setCoords(localStorage.getItem('sanguo.coords') === '1');
      }
    } catch (e) {
      if (e instanceof ApiError && e.status === 404) {
        noSuchGame();
        return;
      }
    }
    connect();
    tick = setInterval(renderClocks, 100);
    window.addEventListener('online', onOnline);
  }

  function noSuchGame() {
    destroyed = true;
    gameEl.dataset.missing = 'true';
    clear(gameEl);
    gameEl.appendChild(
      h('section', { class: 'card', id: 'no-such-game' }, h('h2', {}, t('notFound')), h('p', {}, t('notFoundHelp')), h('p', {}, h('a', { href: '#/', id: 'back-to-lobby', class: 'button' }, t('toLobby')))),
    );
  }

  // the network came back: do not wait for the backoff
  function onOnline() {
    if (!ws && !destroyed) {
      clearTimeout(retryTimer);
      connect();
    }
  }

  function connect() {
    if (destroyed) return;
    const sock = new WebSocket(wsUrl(id));
    ws = sock;
    sock.onopen = () => {
      // The legal moves come only while this seat is to move: the board uses no others.
      const hello = { type: 'hello', protocol: PROTOCOL, legal_moves: 'own' };
      const s = currentSession();
      if (s) hello.token = s.token;
      if (st.v !== null) hello.v = st.v;
      sock.send(JSON.stringify(hello));
      clearInterval(pingTimer);
      pingTimer = setInterval(() => send({ type: 'ping', n: Date.now() }), 20000);
    };
    sock.onmessage = (e) => {
      let msg;
      try {
        msg = JSON.parse(e.data);
      } catch {
        return;
      }
      onMessage(msg);
    };
    sock.onclose = () => {
      clearInterval(pingTimer);
      if (ws !== sock || destroyed) return;
      ws = null;
      gameEl.dataset.connected = 'false';
      if (st.game && st.game.phase === 'finished' && !everConnected) return;
      banner(t('reconnecting'));
      const delay = Math.min(5000, 300 * 2 ** retry);
      retry += 1;
      retryTimer = setTimeout(connect, delay);
    };
  }

  function reconnectNow() {
    if (ws) {
      const old = ws;
      ws = null;
      old.onclose = null;
      old.close();
    }
    connect();
  }

  function onMessage(msg) {
    switch (msg.type) {
      case 'welcome':
        st.role = msg.role;
        st.side = msg.side || null;
        gameEl.dataset.connected = 'true';
        if (everConnected && retry > 0) banner(t('reconnected'), 'ok', 2000);
        else banner(null);
        everConnected = true;
        retry = 0;
        if (st.side) board.setView(V.view(st.side));
        if (st.role === 'player') rememberGame(id);
        if (st.game) render(); // a second welcome: a watcher took a seat
        break;
      case 'snapshot':
        applySnapshot(msg.game);
        break;
      case 'event':
        if (st.v === null) return;
        if (msg.v <= st.v) return; // already held
        if (msg.v !== st.v + 1) {
          reconnectNow(); // a gap: ask again from the last version held
          return;
        }
        st.v = msg.v;
        if (msg.event) applyEvent(msg.event);
        render();
        break;
      case 'error':
        onError(msg);
        break;
      case 'ping':
        send({ type: 'pong', n: msg.n });
        break;
      case 'storage':
        // The server's store is out: nothing is acknowledged and every clock
        // stands still until it is back; the clocks shown stand still too.
        if (msg.waiting && !st.storageFrozenAt) {
          st.storageFrozenAt = performance.now();
          gameEl.dataset.storage = 'waiting';
          banner(t('storageWaiting'), 'warn');
        } else if (!msg.waiting && st.storageFrozenAt) {
          if (st.clockAt) st.clockAt += performance.now() - st.storageFrozenAt;
          st.storageFrozenAt = null;
          delete gameEl.dataset.storage;
          banner(t('storageBack'), 'ok', 3000);
        }
        break;
      default:
        break;
    }
  }

  function onError(msg) {
    if (msg.code === 'unsupported_protocol' || (msg.code === 'unauthorized' && !st.role)) {
      // reconnecting would not help: say so and stop
      destroyed = true;
      banner(errorText(msg));
      if (msg.code === 'unauthorized') localStorage.removeItem('sanguo.session');
      return;
    }
    note('bad', errorText(msg), 6000);
    if (['illegal_move', 'stale_move', 'not_your_turn', 'bad_move', 'duplicate_move'].includes(msg.code)) {
      render(); // undo the optimistic move
    }
  }

  // ---- state --------------------------------------------------------------
  // The chat so far (a snapshot has none): the lines this viewer may read, from the record.
  function loadChat() {
    const mark = st.chat.length; // lines that arrive meanwhile are kept
    api
      .record(id)
      .then((r) => {
        const player = st.role === 'player';
        const finished = st.game && st.game.phase === 'finished';
        const lines = (r.chat || []).filter((c) => (c.channel === 'players' ? player : !player || finished));
        st.chat = [...lines, ...st.chat.slice(mark)];
        renderChat();
      })
      .catch(() => {});
  }

  function applySnapshot(snap) {
    useVariant(snap.settings.variant);
    loadChat();
    st.game = snap;
    st.v = snap.v;
    st.clockAt = performance.now();
    const last = snap.moves[snap.moves.length - 1];
    st.lastMove = last ? splitMove(last) : null;
    if (vx) snap.moves.forEach((mv, i) => (st.moveChars[i] = vx.moveLabel(mv)));
    st.checks = snap.status.in_check || [];
    st.departures = snap.result ? [...snap.result.eliminations] : [...(snap.departures || [])];
    render();
    if (snap.moves.some((_, i) => !st.moveSides[i])) {
      if (vx) {
        // the record's moves say who played each (no placement to rebuild: the pieces are hidden)
        api
          .record(id)
          .then((r) => {
            for (const m of r.moves) st.moveSides[m.ply] = m.side;
            renderMoves();
          })
          .catch(() => {});
        return;
      }
      api
        .record(id)
        .then((r) => {
          for (const m of r.moves) st.moveSides[m.ply] = m.side;
          let placement = V.placementOfText(r.initial_position);
          for (const m of r.moves) {
            const [from, to] = m.mv.split('-');
            const p = placement.get(from);
            if (p && !st.moveChars[m.ply]) st.moveChars[m.ply] = V.pieceChar(p);
            placement = new Map(placement);
            placement.delete(from);
            if (p) placement.set(to, p);
          }
          if (st.lastMove && r.moves.length === st.game.moves.length && r.moves.length) st.lastMove.side = r.moves[r.moves.length - 1].side;
          renderMoves();
        })
        .catch(() => {});
    }
  }

  function setStatus(status) {
    st.game.status = status;
    st.checks = status.in_check || [];
    st.clockAt = performance.now();
  }

  function applyEvent(ev) {
    const g = st.game;
    switch (ev.kind) {
      case 'joined':
        g.seats[SIDES.indexOf(ev.side)] = ev.seat;
        break;
      case 'started':
        g.phase = 'live';
        setStatus(ev.status);
        break;
      case 'moved':
        if (vx) st.moveChars[ev.ply] = vx.moveLabel(ev.mv, ev.revealed);
        else {
          const p = V.placement(g.status).get(ev.mv.split('-')[0]);
          if (p) st.moveChars[ev.ply] = V.pieceChar(p);
        }
        g.moves.push(ev.mv);
        st.moveSides[ev.ply] = ev.side;
        st.lastMove = { ...splitMove(ev.mv), side: ev.side };
        setStatus(ev.status);
        if ((ev.status.in_check || []).length) play('check');
        else playMove(!!ev.captured);
        st.lowWarned = false;
        break;
      case 'warned':
        note('warn', t('warned', { side: sideName(ev.side), request: t(`request_${ev.request}`) }), 15000);
        break;
      case 'eliminated':
        st.departures.push({ side: ev.side, reason: ev.reason, ply: ev.ply });
        break;
      case 'draw_offered':
        g.status.pending_offer = { by: ev.by, waiting: ev.to };
        break;
      case 'draw_answered':
        if (g.status.pending_offer) g.status.pending_offer.waiting = g.status.pending_offer.waiting.filter((s) => s !== ev.by);
        note('', t('drawAnswered', { by: sideName(ev.by), answer: t(ev.accept ? 'accepted' : 'declined') }), 10000);
        break;
      case 'draw_offer_lapsed':
        g.status.pending_offer = null;
        note('', t('drawLapsed', { by: sideName(ev.by) }), 8000);
        break;
      case 'state':
        setStatus(ev.status);
        break;
      case 'restored':
        setStatus(ev.status);
        note('warn', t('restored'), 10000);
        break;
      case 'arbiter':
        setStatus(ev.status);
        note('warn', t('arbiterNote', { by: ev.by, action: t(`arbiter_${ev.action.kind}`), reason: ev.reason }), 15000);
        break;
      case 'finished':
        play('end');
        g.phase = 'finished';
        g.result = ev.result;
        st.departures = [...ev.result.eliminations];
        break;
      case 'presence': {
        const seatInfo = g.seats[SIDES.indexOf(ev.side)];
        if (seatInfo) seatInfo.online = ev.online;
        if (!ev.online && ev.grace_ms != null) st.graceAt[ev.side] = performance.now() + ev.grace_ms;
        else delete st.graceAt[ev.side];
        if (g.phase === 'live' && ev.side !== mySide()) note(ev.online ? 'good' : 'warn', t(ev.online ? 'presenceOn' : 'presenceOff', { side: sideName(ev.side) }), 6000);
        break;
      }
      case 'noted': {
        // a line of the variant's own record (三国演弈棋: an alliance, the 汉 force, an absorption;
        // 三国暗棋: claims, passes, 收军 — anqi.js shows them)
        if (vx) {
          vx.noted(ev);
          break;
        }
        const text = V.notedText(ev.text);
        if (text) note('warn', text, 15000, 'noted');
        break;
      }
      case 'chat':
        st.chat.push(ev);
        renderChat();
        break;
      default:
        break;
    }
  }

  function splitMove(mv) {
    if (vx) return vx.split(mv);
    const [from, to] = mv.split('-');
    return { from, to };
  }

  function note(cls, text, ms, id) {
    st.notes.push({ cls, text, until: performance.now() + ms, id });
    renderNotes();
  }

  const mySide = () => (st.role === 'player' ? st.side : null);
  const isLive = () => st.game && st.game.phase === 'live';
  const myTurn = () => isLive() && mySide() && st.game.status.turn === mySide() && st.game.status.live.includes(mySide());

  // ---- actions ------------------------------------------------------------
  function sendMove(from, to) {
    const s = st.game.status;
    if (!send({ type: 'move', ply: s.ply, mv: `${from}-${to}` })) return;
    // optimistic: show the piece on its way; the server's event follows
    const placement = V.placement(s);
    const p = placement.get(from);
    placement.delete(from);
    if (p) placement.set(to, p);
    board.update({ placement, legal: new Map(), last: { from, to }, interactive: false });
  }

  // A move the board would not take: the engine's reason, from the server.
  let explainSeq = 0;
  async function explainRefusal(from, to) {
    if (!isLive() || !mySide() || !st.game.status.live.includes(mySide())) return;
    const s = st.game.status;
    if (s.turn !== mySide()) {
      showRefusal({ code: 'not_your_turn', params: { turn: s.turn } });
      return;
    }
    if (!from) {
      const p = V.placement(s).get(to);
      if (p) showRefusal(V.pieceRefusal(p, s.turn));
      return;
    }
    const seq = ++explainSeq;
    try {
      const ex = await api.explain(id, `${from}-${to}`);
      if (seq === explainSeq && ex.refusal) showRefusal(ex.refusal);
    } catch {
      /* the reason is a help, not a must */
    }
  }

  function showRefusal(refusal) {
    const { text, rule } = V.refusalText(refusal);
    st.notes = st.notes.filter((n) => n.id !== 'refusal');
    // the rule it cites, on the rules page (a new tab: the game stays open)
    const link = rule ? h('a', { href: `#/rules/${rule}`, target: '_blank', class: 'rule-link', 'data-rule': rule }, V.ruleLinkText()) : null;
    st.notes.push({ cls: 'bad', text, link, until: performance.now() + 12000, id: 'refusal', code: refusal.code });
    renderNotes();
  }

  function chatChannel() {
    if (st.role === 'player' && !(st.game && st.game.phase === 'finished')) return 'players';
    if (st.role === 'player' && st.game && st.game.settings.players_chat) return chatChannelSel.value;
    return 'spectators';
  }

  /** A player's view: each move played since its own last one (its opponents' replies). */
  function recentMoves() {
    const me = mySide();
    const g = st.game;
    if (!me || !g) return [];
    return V.recent(g.moves, st.moveSides, me);
  }

  // ---- rendering ----------------------------------------------------------
  function render() {
    const g = st.game;
    if (!g) return;
    const s = g.status;
    // the tab says when it is your move
    document.title = myTurn() ? `● ${t('yourTurn')} · ${t('title')}` : `${t('title')} · Sanguo`;
    gameEl.dataset.phase = g.phase;
    gameEl.dataset.paused = String(!!s.paused);
    gameEl.dataset.ply = String(s.ply);
    gameEl.dataset.turn = s.turn;
    gameEl.dataset.v = String(st.v);
    gameEl.dataset.role = st.role || '';
    gameEl.dataset.side = st.side || '';
    const legal = new Map();
    if (myTurn()) {
      for (const m of s.legal_moves) {
        const [from, to] = m.split('-');
        if (!legal.has(from)) legal.set(from, []);
        legal.get(from).push(to);
      }
    }
    if (vx) {
      vx.renderBoard(g, { interactive: myTurn(), last: st.lastMove });
      vx.sendSeed(g, mySide());
      variantEl.replaceChildren(vx.panel(g, mySide()));
    } else if (st.browse != null && st.browsePositions) {
      const n = st.browse;
      const m = n > 0 ? splitMove(g.moves[n - 1]) : null;
      board.update({ placement: st.browsePositions[n], legal: new Map(), last: m, recent: [], checked: [], interactive: false, mover: null });
      gameEl.dataset.browse = String(n);
    } else {
      delete gameEl.dataset.browse;
      const last = st.lastMove && { ...st.lastMove, side: st.lastMove.side && V.colour(st.lastMove.side) };
      board.update({ placement: V.placement(s), legal, last, recent: recentMoves(), checks: undefined, checked: V.checkedMarks(st.checks), allied: V.alliedMarks ? V.alliedMarks(s) : [], interactive: myTurn(), mover: myTurn() ? V.colour(mySide()) : null });
    }
    renderBrowse();
    // status line
    let line;
    if (g.phase === 'open') line = t('waitingPlayers');
    else if (g.phase === 'finished') line = t('gameOver');
    else if (myTurn()) line = t('yourTurn') + ' · ' + t('round', { n: s.round + 1 });
    else line = t('toMove', { side: sideName(s.turn) }) + ' · ' + t('round', { n: s.round + 1 });
    // why this side moves (三国演弈棋: 被将先走 gives the move out of order)
    const why = g.phase === 'live' ? V.turnText(s, mySide()) : null;
    if (why) line += ` — ${why}`;
    const who = st.role === 'player' ? t('playingAs', { side: sideName(st.side) }) : st.role ? t('spectator') : t('connecting');
    statusLine.replaceChildren(h('div', {}, line), h('div', { class: 'muted', id: 'role-line' }, who + ' · ' + tcLabel(g.settings.time_control) + (vx ? '' : ' · ' + t(g.settings.direction))));
    renderClocks(true);
    renderNotes();
    renderInvite();
    renderActions();
    renderMoves();
    renderChatHead();
  }

  let clockEls = null;
  function renderClocks(rebuild) {
    const g = st.game;
    if (!g) return;
    const s = g.status;
    if (rebuild === true || !clockEls) {
      clockEls = {};
      clocksEl.replaceChildren();
      // the viewer's own clock last (nearest the board's bottom on phones)
      const order = [...SIDES];
      if (st.side) {
        const i = SIDES.indexOf(st.side);
        order.splice(0, 3, SIDES[(i + 1) % 3], SIDES[(i + 2) % 3], SIDES[i]);
      }
      for (const side of order) {
        const idx = SIDES.indexOf(side);
        const seatInfo = g.seats[idx];
        const out = g.phase !== 'open' && !s.live.includes(side);
        const time = h('span', { class: 'time' });
        const extra = h('span', { class: 'extra' });
        const off = h('span', { class: 'off' });
        const el = h(
          'div',
          { class: `clock${s.turn === side && g.phase === 'live' ? ' turn' : ''}${out ? ' out' : ''}`, 'data-side': side },
          vx ? vx.badge(side, s) : h('span', { class: `piece-badge side-${V.colour(side)}` }, V.kingChar(side)),
          h('span', { class: 'who' }, h('span', {}, sideName(side) + (st.side === side && st.role === 'player' ? ` (${t('you')})` : ''), ...V.clockBadges(s, side).map((b) => h('span', { class: `clock-badge ${b.cls}`, title: b.title }, b.text))), h('span', { class: 'nm', 'data-bot': seatInfo && seatInfo.bot ? seatInfo.bot : null }, seatName(seatInfo)), off),
          h('span', { style: 'text-align:right' }, time, h('br'), extra),
        );
        clocksEl.appendChild(el);
        clockEls[side] = { time, extra, off };
      }
    }
    const elapsed = Math.max(0, (st.storageFrozenAt || performance.now()) - st.clockAt);
    const tc = g.settings.time_control;
    SIDES.forEach((side, idx) => {
      const c = s.clocks[idx];
      const e = clockEls[side];
      if (!c || !e) return;
      const run = c.running && g.phase === 'live' ? elapsed : 0;
      const face = clockFace(c, tc, run);
      const main = face.ms;
      let extraText = '';
      let low;
      if (face.byoyomi) {
        extraText = t('byoyomi', { periods: face.periods });
        low = main < 10000;
      } else {
        low = main < 30000;
      }
      let timeText = formatClock(main);
      if (c.move_left_ms != null) {
        const ml = Math.max(0, c.move_left_ms - run);
        extraText = `${extraText ? extraText + ' · ' : ''}${t('perMove')} ${formatClock(ml)}`;
        if (ml < 10000) low = true;
      } else if (tc.per_move_ms && !extraText) {
        extraText = `${t('perMove')} ${formatClock(tc.per_move_ms)}`;
      }
      e.time.textContent = timeText;
      e.time.classList.toggle('low', low && c.running);
      if (low && c.running && g.phase === 'live' && side === mySide() && !st.lowWarned) {
        st.lowWarned = true;
        play('low');
      }
      e.extra.textContent = extraText;
      const seatInfo = g.seats[idx];
      if (seatInfo && !seatInfo.online && g.phase !== 'finished') {
        const dl = st.graceAt[side];
        e.off.textContent = dl ? t('graceLeft', { s: formatClock(Math.max(0, dl - performance.now())) }) : t('offline');
      } else e.off.textContent = '';
    });
    // drop expired notes
    if (st.notes.some((n) => n.until < performance.now())) renderNotes();
  }

  function renderNotes() {
    const g = st.game;
    const now = performance.now();
    st.notes = st.notes.filter((n) => n.until > now);
    const out = [];
    if (st.error) out.push(h('div', { class: 'note bad' }, st.error));
    if (g) {
      const s = g.status;
      if (g.result) {
        out.push(h('div', { class: 'note good result', id: 'result' }, ...(vx ? vx.result(g.result, g.seats) : describeResult(g.result, g.seats, { sideName, colour: V.colour }))));
        if (g.settings.rated) out.push(ratingChangesFor(id));
        out.push(h('div', {}, h('a', { href: `#/r/${id}`, id: 'replay-link' }, t('replay'))));
      }
      for (const d of g.result ? [] : st.departures) {
        out.push(h('div', { class: 'note bad', 'data-eliminated': d.side }, t('eliminated', { side: sideName(d.side), reason: reasonText(d.reason), ply: d.ply })));
      }
      if (g.phase === 'live') {
        // out before this page connected: the snapshot has no reason
        for (const x of SIDES) {
          if (!s.live.includes(x) && !st.departures.some((d) => d.side === x)) out.push(h('div', { class: 'note bad', 'data-eliminated': x }, t('out', { side: sideName(x) })));
        }
      }
      if (g.phase === 'live') {
        if (st.checks.length) out.push(h('div', { class: 'note bad', id: 'check-note' }, t('check', { sides: st.checks.map((x) => sideName(x, true)).join(', ') })));
        if (st.lastMove && !vx) out.push(h('div', { class: 'note' }, t('lastMove', { mv: `${st.lastMove.from}-${st.lastMove.to}` })));
        if (vx) out.push(...vx.notes(g));
        else if (s.pending_offer) {
          const po = s.pending_offer;
          out.push(h('div', { class: 'note warn', id: 'offer-note' }, t('drawOffered', { by: sideName(po.by), waiting: po.waiting.map((x) => sideName(x, true)).join(', ') || '—' })));
        }
        if (!vx) for (const n of V.statusNotes(s, mySide(), st.game.limits)) out.push(h('div', { class: `note ${n.cls}`, id: n.id ? `${n.id}-note` : null, 'data-reason': n.reason || null }, n.text));
      }
    }
    for (const n of st.notes) out.push(h('div', { class: `note ${n.cls}`, id: n.id ? `${n.id}-note` : null, 'data-code': n.code || null }, n.text, n.link ? ' ' : null, n.link || null));
    notesEl.replaceChildren(...out);
  }

  function renderInvite() {
    const g = st.game;
    if (g.phase !== 'open') {
      inviteEl.replaceChildren();
      return;
    }
    const rows = [h('h2', {}, t('invite'))];
    SIDES.forEach((side, idx) => {
      const seatInfo = g.seats[idx];
      const url = `${location.origin}${location.pathname}#/g/${id}?seat=${side}`;
      if (seatInfo) {
        rows.push(h('div', { class: 'invite-row' }, dot(side), sideName(side), ': ', seatName(seatInfo)));
      } else {
        const input = h('input', { value: url, readonly: '', 'data-invite': side });
        const btn = h('button', { type: 'button', class: 'small' }, t('copy'));
        btn.addEventListener('click', async () => {
          input.select();
          try {
            await navigator.clipboard.writeText(url);
          } catch {
            document.execCommand && document.execCommand('copy');
          }
          btn.textContent = t('copied');
        });
        const row = h('div', { class: 'invite-row' }, dot(side), sideName(side, true), input, btn);
        if (st.role !== 'player') {
          // a watcher may sit down here; the server then welcomes this connection as the player
          const sit = h('button', { type: 'button', class: 'small primary', 'data-sit': side }, t('join'));
          sit.addEventListener('click', async () => {
            try {
              await api.joinGame(id, side, vx ? anqiSeed(id) : undefined);
            } catch (e) {
              note('bad', errorText(e), 6000);
            }
          });
          row.appendChild(sit);
        }
        if (iCreated(id)) {
          // the creator may give a free seat to a bot (the server checks it is the creator)
          const level = h('select', { 'data-bot-level': side }, [1, 2, 3].map((n) => h('option', { value: String(n) }, t('botLevel', { n }))));
          const add = h('button', { type: 'button', class: 'small', 'data-add-bot': side }, t('addBot'));
          add.addEventListener('click', async () => {
            try {
              await api.addBot(id, side, Number(level.value));
            } catch (e) {
              note('bad', errorText(e), 6000);
            }
          });
          row.append(level, add);
        }
        rows.push(row);
      }
    });
    inviteEl.replaceChildren(...rows);
  }

  function renderActions() {
    const g = st.game;
    const me = mySide();
    const buttons = [];
    confirmEl.replaceChildren();
    if (g.phase === 'finished' && me) {
      // a rematch: a new game with the same settings, this player at the same seat;
      // the others are told in the chat, with the link
      const again = h('button', { type: 'button', class: 'primary', id: 'rematch-btn' }, t('rematch'));
      again.addEventListener('click', async () => {
        const s = g.settings;
        try {
          const snap = await api.createGame({ variant: s.variant || 'sanguo', anqi: s.anqi, time_control: s.time_control, direction: s.direction, public: s.public, players_chat: s.players_chat, grace_ms: s.grace_ms });
          rememberCreated(snap.id);
          send({ type: 'chat', channel: s.players_chat ? 'players' : 'spectators', text: `${t('rematchChat')} #/g/${snap.id}?seat=any` });
          location.hash = `#/g/${snap.id}?seat=${me}`;
        } catch (e) {
          note('bad', errorText(e), 6000);
        }
      });
      actionsEl.replaceChildren(again);
      return;
    }
    if (!(isLive() && me && g.status.live.includes(me))) {
      actionsEl.replaceChildren();
      return;
    }
    if (vx) {
      vx.actions(g, me, { actionsEl, confirmEl, t, render: renderActions });
      return;
    }
    const s = g.status;
    const phase3 = s.live.length === 3;
    // null: no limit on the number of offers (三国演弈棋)
    const offersLeft = V.offersLeft(s, st.game.limits, me);
    const resign = h('button', { type: 'button', class: 'danger', id: 'resign-btn' }, t('resign'));
    resign.addEventListener('click', () => {
      st.confirm = 'resign';
      renderActions();
    });
    const offer = h('button', { type: 'button', id: 'offer-btn' }, t('offerDraw'));
    offer.disabled = (offersLeft !== null && offersLeft <= 0) || !!s.pending_offer || !V.canOffer(s, me);
    offer.addEventListener('click', () => {
      st.confirm = 'draw';
      renderActions();
    });
    buttons.push(resign, offer, offersLeft === null ? null : h('span', { class: 'muted' }, t('offersLeft', { n: offersLeft })));
    actionsEl.replaceChildren(...buttons);
    const premature = () => {
      if (!V.premature() || s.round >= st.game.limits.min_rounds_for_requests) return [];
      const warned = s.counters.warnings[SIDES.indexOf(me)] > 0;
      return [h('p', { class: warned ? 'note bad' : 'note warn' }, warned ? t('prematureLoses') : t('prematureWarn', { n: s.round }))];
    };
    if (s.pending_offer && s.pending_offer.waiting.includes(me)) {
      const po = s.pending_offer;
      const acc = h('button', { type: 'button', class: 'primary', id: 'accept-draw' }, t('accept'));
      const dec = h('button', { type: 'button', id: 'decline-draw' }, t('decline'));
      acc.addEventListener('click', () => send({ type: 'answer_draw', accept: true }));
      dec.addEventListener('click', () => send({ type: 'answer_draw', accept: false }));
      confirmEl.replaceChildren(
        h('div', { class: 'confirm-box', id: 'draw-answer' }, h('strong', {}, t('drawOffered', { by: sideName(po.by), waiting: po.waiting.map((x) => sideName(x, true)).join(', ') })), h('p', {}, phase3 ? t('drawAnswer3', { by: sideName(po.by, true) }) : t('drawAnswer2')), h('div', { class: 'actions' }, acc, dec)),
      );
      return;
    }
    if (st.confirm) {
      const kind = st.confirm;
      const ok = h('button', { type: 'button', class: 'primary', id: 'confirm-yes' }, t('confirm'));
      const no = h('button', { type: 'button', id: 'confirm-no' }, t('cancel'));
      ok.addEventListener('click', () => {
        send(kind === 'resign' ? { type: 'resign' } : { type: 'offer_draw' });
        st.confirm = null;
        renderActions();
      });
      no.addEventListener('click', () => {
        st.confirm = null;
        renderActions();
      });
      const text = kind === 'resign' ? t(phase3 ? 'resignConfirm3' : 'resignConfirm2') : t(phase3 ? 'drawConfirm3' : 'drawConfirm2');
      confirmEl.replaceChildren(h('div', { class: 'confirm-box', id: 'confirm-box' }, h('p', {}, text), ...premature(), h('div', { class: 'actions' }, ok, no)));
    }
  }

  function renderMoves() {
    const g = st.game;
    const shown = st.browse != null ? st.browse - 1 : g.moves.length - 1;
    const items = g.moves.map((mv, i) => {
      const side = st.moveSides[i];
      const e = h('span', { class: `mv${i === shown ? ' cur' : ''}`, 'data-ply': String(i) }, `${i + 1}. `, side ? dot(side) : '', st.moveChars[i] ? `${st.moveChars[i]} ` : '', mv);
      if (V.browsable) e.addEventListener('click', () => browseTo(i + 1));
      return e;
    });
    movesEl.classList.toggle('clickable', !!V.browsable);
    movesEl.replaceChildren(...items);
    if (st.browse == null) movesEl.scrollTop = movesEl.scrollHeight;
  }

  // The positions after each move, rebuilt from the record as the replay does
  // (pieces move point to point; a side that left loses its pieces after the
  // move its departure follows). No rule is applied.
  async function browseTo(n) {
    const g = st.game;
    if (vx) {
      location.hash = `#/r/${id}`;
      return;
    }
    if (n >= g.moves.length) {
      st.browse = null;
      render();
      return;
    }
    if (!st.browsePositions || st.browsePositions.length <= n) {
      try {
        const r = await api.record(id);
        let placement = V.placementOfText(r.initial_position);
        const positions = [new Map(placement)];
        r.moves.forEach((m, i) => {
          placement = new Map(placement);
          const [from, to] = m.mv.split('-');
          const p = placement.get(from);
          placement.delete(from);
          if (p) placement.set(to, p);
          for (const d of st.departures) {
            if (d.ply === i + 1) for (const [pt, q] of [...placement]) if (q.side === d.side) placement.delete(pt);
          }
          positions.push(placement);
        });
        st.browsePositions = positions;
      } catch {
        return;
      }
    }
    st.browse = Math.max(0, Math.min(n, st.browsePositions.length - 1));
    render();
  }

  function renderBrowse() {
    if (st.browse == null) {
      browseEl.hidden = true;
      return;
    }
    const step = (d) => () => browseTo(st.browse + d);
    const btn = (label, bid, f) => {
      const b = h('button', { type: 'button', class: 'small', id: bid }, label);
      b.addEventListener('click', f);
      return b;
    };
    browseEl.hidden = false;
    browseEl.replaceChildren(
      btn('◀', 'browse-back', step(-1)),
      h('span', { class: 'muted', id: 'browse-at' }, t('browsing', { n: st.browse })),
      btn('▶', 'browse-fwd', step(1)),
      btn(t('backToGame'), 'browse-live', () => browseTo(Infinity)),
    );
  }

  function renderChatHead() {
    const g = st.game;
    const ch = chatChannel();
    chatTitle.textContent = `${t('chat')} · ${t(ch === 'players' ? 'chatPlayers' : 'chatSpectators')}`;
    chatChannelSel.hidden = !(st.role === 'player' && g.phase === 'finished' && g.settings.players_chat);
    const disabled = ch === 'players' && !g.settings.players_chat;
    chatInput.disabled = disabled;
    chatInput.placeholder = disabled ? t('chatOff') : '';
  }

  /** A chat line's text; game links (#/g/…, as a rematch sends) become links. */
  function chatText(text) {
    return text.split(/(#\/g\/[a-z0-9]+(?:\?seat=[A-Za-z]+)?)/).map((part, i) => (i % 2 ? h('a', { href: part, class: 'game-link' }, part) : part));
  }

  function renderChat() {
    chatLog.replaceChildren(
      ...st.chat.map((c) =>
        h('div', { class: 'chat-line' }, c.side ? dot(c.side) : '', h('strong', {}, c.from), c.channel === 'spectators' && st.role === 'player' ? ` (${t('chatSpectators')})` : '', ': ', ...chatText(c.text)),
      ),
    );
    chatLog.scrollTop = chatLog.scrollHeight;
  }

  start();

  return {
    destroy() {
      destroyed = true;
      window.removeEventListener('online', onOnline);
      clearInterval(tick);
      clearInterval(pingTimer);
      clearTimeout(retryTimer);
      banner(null);
      if (ws) {
        const old = ws;
        ws = null;
        old.close();
      }
    },
    rerender() {
      clockEls = null;
      render();
      renderChat();
    },
  };
}
