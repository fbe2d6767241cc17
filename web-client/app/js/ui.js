// Small DOM helpers and text shared by the pages.

import { t, sideName as defaultSideName } from './i18n.js';
import { SIDES } from './geometry.js';

/** Creates an element: h('div', {class: 'x'}, child, 'text', …). */
export function h(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'value') e.value = v;
    else e.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    e.appendChild(typeof c === 'string' || typeof c === 'number' ? document.createTextNode(String(c)) : c);
  }
  return e;
}

export function clear(e) {
  e.replaceChildren();
}

/** m:ss, or s.d under 10 s. */
export function formatClock(ms) {
  ms = Math.max(0, ms);
  if (ms < 10000) return (Math.floor(ms / 100) / 10).toFixed(1);
  const total = Math.floor(ms / 1000);
  const hh = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = String(total % 60).padStart(2, '0');
  return hh ? `${hh}:${String(m).padStart(2, '0')}:${s}` : `${m}:${s}`;
}

/** How a seat's holder is shown: a bot by its level, a person by name. */
export function seatName(seat) {
  if (!seat) return t('free');
  return seat.bot ? t('botName', { n: seat.bot }) : seat.name;
}

export function reasonText(r) {
  return t(`reason_${r}`);
}

/**
 * What a clock shows `run` ms after the server's view `c` of it (protocol
 * `Clock`) under time control `tc`: main time, or in byo-yomi the time left in
 * the current period and the periods left, which roll over exactly as the
 * server's do (an overrun period is consumed, the next one starts full).
 */
export function clockFace(c, tc, run) {
  const byo = tc.byoyomi;
  let main = c.remaining_ms - (c.in_byoyomi ? 0 : run);
  if (!byo || (!c.in_byoyomi && main > 0)) return { ms: Math.max(0, main), byoyomi: false, periods: c.periods_left };
  const period = byo.period_ms;
  // time left in the current period, before any rollover
  let left = c.in_byoyomi ? (c.period_left_ms != null ? c.period_left_ms : period) - (c.running ? run : 0) : period + main;
  let periods = c.periods_left;
  while (left <= 0 && periods > 1 && period > 0) {
    left += period;
    periods -= 1;
  }
  return { ms: Math.max(0, left), byoyomi: true, periods };
}

/** Seconds as the shortest text: 20″, 1′, 1′30″, 1h. */
function dur(ms) {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}″`;
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const r = s % 60;
  return (h ? `${h}h` : '') + (m ? `${m}′` : '') + (r ? `${r}″` : '');
}

export function tcLabel(tc) {
  if (!tc) return '';
  const parts = [tc.base_ms % 60000 === 0 && tc.base_ms > 0 ? `${tc.base_ms / 60000}′` : dur(tc.base_ms)];
  if (tc.increment_ms) parts.push(`+${tc.increment_ms / 1000}″`);
  if (tc.byoyomi) parts.push(`读秒 ${tc.byoyomi.periods}×${tc.byoyomi.period_ms / 1000}″`);
  if (tc.per_move_ms) parts.push(`步时 ${tc.per_move_ms / 1000}″`);
  return parts.join(' ');
}

/**
 * The result as lines of text (nodes); `names` words the seats as the game's
 * system does ({sideName, colour}; default 三国象棋's).
 */
export function describeResult(result, seats, names = {}) {
  const sideName = names.sideName || defaultSideName;
  const colour = names.colour || ((s) => s);
  const e = result.ending;
  let head;
  switch (e.kind) {
    case 'last_standing':
      head = t('result_last_standing', { winner: sideName(e.winner) });
      break;
    case 'draw':
      head = t('result_draw', { reason: t(`draw_${e.reason}`) });
      break;
    case 'draw_offer_rule':
      head = t('result_draw_offer_rule', { winner: sideName(e.winner) });
      break;
    case 'aborted':
      head = t('result_aborted', { by: sideName(e.by) });
      break;
    case 'adjudicated':
      head = t('result_adjudicated');
      break;
    case 'annulled':
      head = t('result_annulled');
      break;
    default:
      head = JSON.stringify(e);
  }
  const lines = [h('strong', {}, head)];
  if (result.outcomes && result.outcomes.some((o) => o)) {
    lines.push(
      h(
        'div',
        {},
        SIDES.map((s, i) => {
          const o = result.outcomes[i];
          const nm = seats && seats[i] ? ` ${seatName(seats[i])}` : '';
          return h('span', { style: 'margin-right:.8em' }, h('span', { class: `dot dot-${colour(s)}` }), `${sideName(s, true)}${nm}: ${o ? t(`outcome_${o}`) : '—'}`);
        }),
      ),
    );
  }
  for (const d of result.eliminations || []) {
    lines.push(h('div', { class: 'muted' }, t('eliminated', { side: sideName(d.side), reason: reasonText(d.reason), ply: d.ply })));
    if (d.absorbed_by) lines.push(h('div', { class: 'muted', 'data-absorbed': d.side }, t('absorbedBy', { side: sideName(d.side, true), by: sideName(d.absorbed_by, true) })));
  }
  return lines;
}

let bannerTimer = null;
/** Shows (or with null hides) the banner under the header. */
export function banner(text, cls = '', ms = 0) {
  const b = document.getElementById('banner');
  if (!b) return;
  clearTimeout(bannerTimer);
  if (!text) {
    b.hidden = true;
    return;
  }
  b.textContent = text;
  b.className = `banner ${cls}`;
  b.hidden = false;
  if (ms) bannerTimer = setTimeout(() => (b.hidden = true), ms);
}
