// Replay of a game's record: step, jump, flip. Positions are rebuilt by moving
// pieces from point to point (a capture replaces the piece there) and removing an
// eliminated side's pieces after the move its departure follows; no rule is applied.
// 三国演弈棋: the variant's `replayTimeline` (yanyi.js) rebuilds each position and
// state from the record's notes and departures — the 汉 force's activation or 杀汉,
// the alliance, absorptions — and the page shows them as the live page does: the
// notes, the seats' badges (盟, 汉) and who is out.

import { Board } from './board.js';
import { SIDES } from './geometry.js';
import { t, errorText } from './i18n.js';
import { clientOf } from './clients.js';
import { api } from './api.js';
import { h, clear, describeResult, tcLabel, formatClock } from './ui.js';
import { ratingLines } from './players.js';
import { mountAnqiReplay } from './anqi.js';

export function mountReplay(root, id) {
  clear(root);
  const boardWrap = h('div', { class: 'board-wrap' });
  const info = h('div', { class: 'status-line', id: 'replay-info' });
  // the variant's state at the shown position (三国演弈棋: seats, alliance, 汉 force, absorptions)
  const stateEl = h('div', { id: 'replay-state' });
  const resultEl = h('div', { id: 'replay-result' });
  const controls = h('div', { class: 'replay-controls' });
  const movesEl = h('div', { class: 'movelist clickable', id: 'movelist' });
  const page = h(
    'div',
    { class: 'game', id: 'replay', 'data-game': id },
    h('div', { class: 'board-col' }, boardWrap),
    h('div', { class: 'panel' }, h('div', { class: 'actions' }, h('a', { href: '#/' }, t('toLobby'))), info, stateEl, controls, resultEl, h('h2', {}, t('moves')), movesEl),
  );
  root.appendChild(page);
  let board = new Board(boardWrap, { fade: false });
  // the game system's hooks, once the record names it
  let V = clientOf('sanguo');
  const sideName = (s, short) => V.sideName(s, short);
  let positions = [];
  // per position, the state the live page showed then (variants with a replayTimeline)
  let states = null;
  let rec = null;
  let cur = 0;
  let view = 'W';

  const btn = (label, id, f) => {
    const b = h('button', { type: 'button', id, class: 'small' }, label);
    b.addEventListener('click', f);
    return b;
  };
  const slider = h('input', { type: 'range', min: '0', max: '0', value: '0', id: 'replay-slider' });
  slider.addEventListener('input', () => go(Number(slider.value)));
  controls.append(
    btn('|◀ ' + t('start'), 'rp-start', () => go(0)),
    btn('◀ ' + t('back'), 'rp-back', () => go(cur - 1)),
    btn(t('forward') + ' ▶', 'rp-fwd', () => go(cur + 1)),
    btn(t('end') + ' ▶|', 'rp-end', () => go(positions.length - 1)),
    btn('⟳ ' + t('flip'), 'rp-flip', () => {
      view = SIDES[(SIDES.indexOf(view) + 1) % 3];
      board.setView(V.view(view));
    }),
    slider,
  );
  const onKey = (e) => {
    if (e.target && e.target.tagName === 'INPUT' && e.target.type !== 'range') return;
    if (e.key === 'ArrowLeft') go(cur - 1);
    else if (e.key === 'ArrowRight') go(cur + 1);
    else if (e.key === 'Home') go(0);
    else if (e.key === 'End') go(positions.length - 1);
  };
  document.addEventListener('keydown', onKey);

  function go(i) {
    if (!positions.length) return;
    cur = Math.max(0, Math.min(positions.length - 1, i));
    slider.value = String(cur);
    const m = cur > 0 ? rec.moves[cur - 1] : null;
    const [from, to] = m ? m.mv.split('-') : [null, null];
    board.update({ placement: positions[cur], legal: new Map(), last: m ? { from, to, side: V.colour(m.side) } : null, checked: [], allied: states && V.alliedMarks ? V.alliedMarks(states[cur]) : [], interactive: false });
    page.dataset.ply = String(cur);
    const mover = m ? `${cur}. ${sideName(m.side, true)} ${m.mv}` : t('start');
    const clocks = m ? ' · ' + SIDES.map((s, k) => `${sideName(s, true)} ${formatClock(m.clocks_ms[k])}`).join(' / ') : '';
    info.replaceChildren(h('div', {}, mover), h('div', { class: 'muted' }, tcLabel(rec.settings.time_control) + ' · ' + t(rec.settings.direction) + clocks));
    for (const el of movesEl.children) el.classList.toggle('cur', Number(el.dataset.ply) === cur - 1);
    if (states) renderState(states[cur]);
  }

  /** The seats (in or out, with the variant's badges) and the state's notes. */
  function renderState(s) {
    page.dataset.live = s.live.join('');
    const seats = SIDES.map((side) => {
      const out = !s.live.includes(side);
      return h(
        'span',
        { class: `replay-seat${out ? ' out' : ''}`, 'data-side': side, 'data-out': out ? 'true' : null },
        h('span', { class: `piece-badge side-${V.colour(side)}` }, V.kingChar(side)),
        ' ',
        sideName(side, true),
        ...V.clockBadges(s, side).map((b) => h('span', { class: `clock-badge ${b.cls}`, title: b.title }, b.text)),
        out && V.outText ? ` (${V.outText()})` : '',
      );
    });
    stateEl.replaceChildren(
      h('div', { class: 'replay-seats' }, ...seats),
      ...V.statusNotes(s, null).map((n) => h('div', { class: `note ${n.cls || ''}`, id: `replay-${n.id}` }, n.text)),
    );
  }

  let sub = null; // a variant's own replay (三国暗棋: anqi.js)
  api
    .record(id)
    .then(async (r) => {
      // the one place that branches on the variant
      if (r.settings.variant === 'anqi') {
        sub = mountAnqiReplay(root, id, await api.game(id), r, { t });
        return;
      }
      rec = r;
      const variant = (r.settings && r.settings.variant) || 'sanguo';
      if (variant !== V.key) {
        V = clientOf(variant);
        board.svg.remove();
        board = new Board(boardWrap, { fade: false, variant });
        board.setView(V.view(view));
      }
      let placement = V.placementOfText(r.initial_position);
      positions = [new Map(placement)];
      // a live game's record has no result yet: its departures come from its state
      const deps = r.result ? r.result.eliminations : V.replayTimeline ? (await api.game(id)).departures || [] : [];
      const chars = [];
      if (V.replayTimeline) {
        const timeline = V.replayTimeline(r, deps);
        positions = timeline.map((x) => x.placement);
        states = timeline.map((x) => x.status);
      }
      r.moves.forEach((m, i) => {
        if (states) {
          const p = positions[i].get(m.mv.split('-')[0]);
          chars.push(p ? `${V.pieceChar(p)} ` : '');
          return;
        }
        placement = new Map(placement);
        const [from, to] = m.mv.split('-');
        const p = placement.get(from);
        chars.push(p ? `${V.pieceChar(p)} ` : '');
        placement.delete(from);
        if (p) placement.set(to, p);
        for (const d of deps) {
          if (d.ply !== i + 1) continue;
          // a departed side's pieces leave, or change colour when the record names an absorber (三国演弈棋)
          const gone = V.colour(d.side);
          for (const [pt, q] of [...placement]) {
            if (q.side !== gone) continue;
            if (d.absorbed_by && q.piece !== 'K') placement.set(pt, { ...q, side: V.colour(d.absorbed_by), origin: q.origin || q.side });
            else placement.delete(pt);
          }
        }
        positions.push(placement);
      });
      slider.max = String(positions.length - 1);
      movesEl.replaceChildren(
        ...r.moves.map((m, i) => {
          const e = h('span', { class: 'mv', 'data-ply': String(i) }, `${i + 1}. `, h('span', { class: `dot dot-${V.colour(m.side)}` }), chars[i], m.mv);
          e.addEventListener('click', () => go(i + 1));
          return e;
        }),
      );
      resultEl.replaceChildren(r.result ? h('div', { class: 'note good result', id: 'result' }, ...describeResult(r.result, r.seats)) : h('div', {}));
      const changes = ratingLines(r.rating_changes, r.seats);
      if (changes) resultEl.append(h('div', { class: 'note good' }, changes));
      resultEl.replaceChildren(r.result ? h('div', { class: 'note good result', id: 'result' }, ...describeResult(r.result, r.seats, { sideName, colour: V.colour })) : h('div', {}));
      page.dataset.loaded = 'true';
      go(positions.length - 1);
    })
    .catch((e) => {
      info.textContent = errorText(e);
    });

  return {
    destroy() {
      document.removeEventListener('keydown', onKey);
      if (sub) sub.destroy();
    },
  };
}
