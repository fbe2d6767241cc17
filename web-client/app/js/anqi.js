// 三国暗棋 (variant `anqi`, shared/RULES-ANQI.md) in the browser: the board's
// pieces (face-down pieces are blank discs; a face-up piece shows its
// character in red or black and its TEAM as a coloured rim, because the
// character's colour does not tell the team, §2.2), the game page's anqi
// panel (teams, captured lists and scores per seat, the mode's target, the
// commitment, the no-progress count, the scoring proposal) and the replay
// page, which verifies the deal (anqi-verify.js).
//
// The client applies no rule: the legal actions, teams, scores and counters
// come from the server's status (`status.anqi`, protocol/README.md). The only
// data kept here is the §2.2 team table, to colour a revealed piece's rim.

import { Board } from './board.js';
import { getLang } from './i18n.js';
import { h } from './ui.js';
import { verifyDeal, revealsOf, verifySeats } from './anqi-verify.js';

/** Seats 1, 2, 3 on the wire (the design's convention). */
export const SEATS = ['W', 'B', 'Y'];

/** The team of each identity, split 1 and split 2 (RULES-ANQI §2.2). */
const TEAM_OF = {
  split1: { K: 1, k: 1, P: 1, p: 1, A: 2, E: 2, R: 2, N: 2, C: 2, a: 3, e: 3, r: 3, n: 3, c: 3 },
  split2: { P: 1, p: 1, K: 2, A: 2, E: 2, k: 2, a: 2, e: 2, R: 3, N: 3, C: 3, r: 3, n: 3, c: 3 },
};

/** The characters (§2.1), the seed's simplified red forms. */
export const CHARS = { K: '帅', A: '仕', E: '相', R: '伡', N: '㐷', C: '炮', P: '兵', k: '将', a: '士', e: '象', r: '车', n: '马', c: '包', p: '卒' };

const TEXT = {
  en: {
    seat: 'Seat {n}',
    team: 'team {t}',
    teamless: 'no team yet',
    captured: 'captured',
    score: 'score',
    points: 'pts',
    mode_annihilation: 'Annihilation (全灭)',
    mode_shoujun: 'Recover the army (收军)',
    mode_race: 'First to {n} points (先得{n}分)',
    scoring_net: 'deadlock: net score (得失分)',
    scoring_remaining_points: 'deadlock: points left (残存分)',
    scoring_remaining_count: 'deadlock: pieces left (残存数)',
    noProgress: 'No flip or capture for {n} of {max} turns',
    commitment: 'Deal commitment',
    serverHash: "Server's seed hash (SHA-256)",
    mySeed: 'Your seed',
    seeds: "Seats' seeds",
    seedSent: 'sent',
    seedNone: 'none (zeros)',
    seeding: 'The table is full: the deal waits a few seconds for the seats that have not sent their seed yet.',
    fairDeal: 'Fair deal: the layout is derived from the server\'s hidden seed, fixed by its hash above, and the seeds of the seats, so nobody — the server included — can choose it. Everything is published at the end for your check.',
    rulesLink: '三国暗棋 rules',
    seatsVerified: 'Seat-entropy deal verified: SHA-256 of the published server seed is the hash announced at the start, and the server seed, game id and the seats\' seeds give exactly the published layout and salt.',
    seatsNotVerified: 'Seat-entropy deal NOT verified:',
    check_hash: 'server seed matches its hash',
    check_layout: 'layout re-derived from the seeds',
    check_salt: 'salt re-derived from the seeds',
    check_commitment: 'commitment matches layout and salt',
    check_flips: 'every revealed piece matches the layout',
    serverSeed: 'Server seed',
    hidden: '{n} face down',
    propose: 'Propose scoring (申请计分)',
    proposalsLeft: '{n} proposals left',
    proposeConfirm: 'End the game now by deadlock scoring, if every other live seat accepts?',
    proposal: '{by} proposes ending by deadlock scoring; waiting for {waiting}',
    flipHint: 'Click a face-down disc to flip it, or move a piece of your team.',
    removed: 'recovered (收军)',
    place: '{n}.',
    verified: 'Deal verified: the commitment matches the published layout and salt, and all {n} revealed pieces match the layout.',
    notVerified: 'Deal NOT verified:',
    verifying: 'Verifying the deal…',
    layout: 'Layout',
    salt: 'Salt',
    reason_last_seat: 'last seat standing',
    reason_shoujun: 'recovered armies (收军)',
    reason_race: 'target reached',
    reason_no_progress: 'no progress (deadlock scoring)',
    reason_no_action: 'no legal action (deadlock scoring)',
    reason_agreement: 'agreed to score (deadlock scoring)',
    reason_aborted: 'aborted',
    youAre: 'you',
    unowned: 'unowned',
  },
  zh: {
    seat: '{n}号位',
    team: '第{t}队',
    teamless: '尚未认边',
    captured: '吃子',
    score: '得分',
    points: '分',
    mode_annihilation: '全灭',
    mode_shoujun: '收军',
    mode_race: '先得{n}分',
    scoring_net: '僵局：得失分',
    scoring_remaining_points: '僵局：残存分',
    scoring_remaining_count: '僵局：残存数',
    noProgress: '已 {n} 手无翻无吃（上限 {max}）',
    commitment: '洗牌承诺',
    serverHash: '服务器种子哈希（SHA-256）',
    mySeed: '你的种子',
    seeds: '各座种子',
    seedSent: '已交',
    seedNone: '未交（按全零）',
    seeding: '已坐满：发牌前稍候几秒，等待尚未提交种子的座位。',
    fairDeal: '公平发牌：排布由服务器的隐藏种子（已用上面的哈希锁定）和各座的种子共同推导，任何人（包括服务器）都无法选择排布。终局时全部公开，可自行验证。',
    rulesLink: '三国暗棋规则',
    seatsVerified: '座位熵发牌已验证：公布的服务器种子的 SHA-256 与开局公布的哈希一致，服务器种子、对局编号与各座种子推导出的排布和盐与公布的完全相同。',
    seatsNotVerified: '座位熵发牌未通过验证：',
    check_hash: '服务器种子与哈希相符',
    check_layout: '由种子重新推导排布',
    check_salt: '由种子重新推导盐',
    check_commitment: '承诺与排布和盐相符',
    check_flips: '每次翻开都与排布相符',
    serverSeed: '服务器种子',
    hidden: '暗子 {n} 枚',
    propose: '申请计分',
    proposalsLeft: '还可申请 {n} 次',
    proposeConfirm: '申请以僵局计分结束本局？其余在局者都同意才生效。',
    proposal: '{by} 申请计分，等待 {waiting}',
    flipHint: '点暗子翻开，或走本队的明子。',
    removed: '收军',
    place: '第{n}名',
    verified: '洗牌已验证：承诺与公布的排布和盐一致，{n} 次翻开都与排布相符。',
    notVerified: '洗牌未通过验证：',
    verifying: '正在验证洗牌…',
    layout: '排布',
    salt: '盐',
    reason_last_seat: '仅剩一方',
    reason_shoujun: '收军',
    reason_race: '先达目标分',
    reason_no_progress: '长久无进展，僵局计分',
    reason_no_action: '无子可动，僵局计分',
    reason_agreement: '协议计分',
    reason_aborted: '中止',
    youAre: '你',
    unowned: '无主',
  },
};

export function at(key, params = {}) {
  const d = TEXT[getLang()] || TEXT.en;
  const s = d[key] ?? TEXT.en[key] ?? key;
  return s.replace(/\{(\w+)\}/g, (_, k) => String(params[k] ?? `{${k}}`));
}

/** A seat's name: "Seat 1" (W), "Seat 2" (B), "Seat 3" (Y). */
export function seatLabel(side) {
  return at('seat', { n: SEATS.indexOf(side) + 1 });
}

/**
 * Reads a §11.3 position text (viewer form): `{points: Map name → {down} |
 * {piece}, toMove (0–2 or null), teams [t|null ×3], live [seat indices],
 * captured [[letters] ×3], removed [letters], turn, split2, flags}`.
 */
export function parseAnqiPosition(text) {
  const f = (text || '').trim().split(' ');
  const points = new Map();
  const ranks = (f[0] || '').split('/');
  ranks.forEach((row, i) => {
    const rank = 5 - i;
    let file = 0;
    for (let j = 0; j < row.length; j++) {
      const c = row[j];
      if (c >= '1' && c <= '9') file += Number(c);
      else if (c === '?') points.set(`${'abcdefghi'[file++]}${rank}`, { down: true });
      else if (c === '*') {
        // the full form never reaches a client; read it as face down all the same
        j += 1;
        points.set(`${'abcdefghi'[file++]}${rank}`, { down: true });
      } else points.set(`${'abcdefghi'[file++]}${rank}`, { piece: c });
    }
  });
  const toMove = f[1] && f[1] !== '-' ? Number(f[1].split(':')[0]) - 1 : null;
  const teams = [...(f[2] || '---')].map((c) => (c === '-' ? null : Number(c)));
  const live = f[3] && f[3] !== '-' ? [...f[3]].map((c) => Number(c) - 1) : [];
  const lists = (f[4] || '-/-/-').split('/').map((l) => (l === '-' ? [] : [...l]));
  const variant = f[6] || 'split1';
  return {
    points,
    toMove,
    teams,
    live,
    captured: [lists[0] || [], lists[1] || [], lists[2] || []],
    removed: lists[3] || [],
    turn: Number(f[5]) || 1,
    split2: variant.startsWith('split2'),
    flags: variant.split('+').slice(1),
  };
}

/** The team of an identity under the position's split. */
export function teamOf(piece, split2) {
  return TEAM_OF[split2 ? 'split2' : 'split1'][piece];
}

/** The seat (index) holding team `t`, if a live or stopped seat holds it. */
function holderOf(pos, t) {
  const i = pos.teams.indexOf(t);
  return i >= 0 ? i : null;
}

const NS = 'http://www.w3.org/2000/svg';
function el(name, attrs = {}, parent) {
  const e = document.createElementNS(NS, name);
  for (const [k, v] of Object.entries(attrs)) if (v !== null && v !== undefined) e.setAttribute(k, v);
  if (parent) parent.appendChild(e);
  return e;
}
const S = 40;
const r3 = (v) => Math.round(v * 1000) / 1000;

/**
 * The 9×5 board with discs. `update({pos, legal, last, interactive})` takes the
 * parsed position and the legal action texts; a click on a face-down disc that
 * may be flipped sends `+b2`, a move or capture is click–click or a drag.
 */
export class AnqiBoard extends Board {
  constructor(host, opts = {}) {
    super(host, { ...opts, variant: 'anqi' });
    this.onAction = opts.onAction || (() => {});
    this.flips = new Set();
    this.actionText = new Map(); // "from>to" -> action text
    this.pos = null;
    this.flipping = new Set();
    this.svg.classList.add('anqi');
    host.classList.add('anqi');
  }

  /** Sets what to show: the parsed position, the legal action texts, the last action. */
  updateAnqi({ pos, legal = [], last = null, interactive = false }) {
    const old = this.pos;
    this.animate = null;
    this.flipping = new Set();
    if (old) {
      for (const [pt, p] of pos.points) {
        const q = old.points.get(pt);
        if (q && q.down && !p.down) this.flipping.add(pt);
      }
      if (last && last.from !== last.to && old.points.has(last.from) && !pos.points.has(last.from) && pos.points.has(last.to)) this.animate = last;
    }
    this.pos = pos;
    const placement = new Map();
    for (const [pt, p] of pos.points) placement.set(pt, p);
    this.placement = placement;
    this.flips = new Set();
    this.actionText = new Map();
    const moves = new Map();
    for (const a of legal) {
      const f = /^\+([a-i][1-5])$/.exec(a);
      if (f) {
        this.flips.add(f[1]);
        continue;
      }
      const m = /^([a-i][1-5])[-x]([a-i][1-5])$/.exec(a);
      if (!m) continue;
      if (!moves.has(m[1])) moves.set(m[1], []);
      moves.get(m[1]).push(m[2]);
      this.actionText.set(`${m[1]}>${m[2]}`, a);
    }
    this.legal = moves;
    this.last = last && last.from !== last.to ? last : null;
    this.lastFlip = last && last.from === last.to ? last.from : null;
    this.recent = [];
    this.checked = [];
    this.interactive = interactive;
    this.mover = null;
    if (this.selected && !(this.interactive && this.legal.has(this.selected))) this.selected = null;
    this.renderPieces();
    this.renderMarks();
    this.svg.dataset.flips = String(this.flips.size);
  }

  renderMarks() {
    super.renderMarks();
    if (this.lastFlip && this.byName.has(this.lastFlip)) {
      const [x, y] = this.pt(this.lastFlip);
      el('circle', { cx: r3(x), cy: r3(y), r: 0.5 * S, class: 'mark last-flip' }, this.gMarks);
    }
  }

  renderPieces() {
    this.gPieces.replaceChildren();
    const pos = this.pos;
    if (!pos) return;
    for (const [pt, p] of pos.points) {
      if (!this.byName.has(pt)) continue;
      const [x, y] = this.pt(pt);
      const g = el('g', { class: 'piece anqi-piece', 'data-at': pt, transform: `translate(${r3(x)} ${r3(y)})` }, this.gPieces);
      const inner = el('g', { class: 'face' }, g);
      if (p.down) {
        g.classList.add('down');
        g.dataset.piece = '?';
        if (this.interactive && this.flips.has(pt)) g.classList.add('movable');
        el('circle', { r: 0.42 * S, class: 'disc' }, inner);
        el('circle', { r: 0.3 * S, class: 'disc-inner' }, inner);
      } else {
        const t = teamOf(p.piece, pos.split2);
        const seat = holderOf(pos, t);
        const owned = seat !== null && pos.live.includes(seat);
        g.classList.add(`team-${t}`, /[A-Z]/.test(p.piece) ? 'red' : 'black');
        if (!owned) g.classList.add('unowned');
        g.dataset.piece = p.piece;
        g.dataset.team = String(t);
        if (seat !== null) g.dataset.seat = SEATS[seat];
        if (this.interactive && this.legal.has(pt)) g.classList.add('movable');
        el('circle', { r: 0.44 * S, class: 'rim' }, inner);
        el('circle', { r: 0.34 * S, class: 'body' }, inner);
        el('text', { x: 0, y: 0.015 * S, class: 'char' }, inner).textContent = CHARS[p.piece] || p.piece;
        if (this.flipping.has(pt)) g.classList.add('flipping');
      }
      if (this.animate && this.animate.to === pt) {
        const [fx, fy] = this.pt(this.animate.from);
        inner.style.transform = `translate(${r3(fx - x)}px, ${r3(fy - y)}px)`;
        requestAnimationFrame(() =>
          requestAnimationFrame(() => {
            inner.style.transition = 'transform 180ms ease-out';
            inner.style.transform = '';
          }),
        );
      }
    }
    this.animate = null;
  }

  selectable(name) {
    return this.legal.has(name);
  }

  tryMove(from, to) {
    const text = this.actionText.get(`${from}>${to}`);
    if (!text) return false;
    this.selected = null;
    this.onAction(text);
    return true;
  }

  pointerDown(e) {
    const hit = this.pointAt(e);
    const p = hit && hit.name ? this.placement.get(hit.name) : null;
    if (this.interactive && p && p.down && !(this.selected && this.actionText.has(`${this.selected}>${hit.name}`))) {
      e.preventDefault();
      this.selected = null;
      if (this.flips.has(hit.name)) this.onAction(`+${hit.name}`);
      else this.onRefused(null, hit.name);
      this.renderMarks();
      return;
    }
    super.pointerDown(e);
  }
}

// ---- the game page's anqi parts ------------------------------------------

/** A seat's rim colour badge: its team's colour, or grey while it has none. */
function teamBadge(team) {
  return h('span', { class: `anqi-team-badge${team ? ` team-${team}` : ''}`, 'data-team': team ? String(team) : '' }, team ? String(team) : '–');
}

/** The mode line: mode, target, scoring. */
export function modeText(a) {
  const mode = a.mode === 'race' ? at('mode_race', { n: a.target }) : at(`mode_${a.mode}`);
  return `${mode} · ${at(`scoring_${a.scoring}`)}`;
}

/**
 * The panel under the clocks: per seat its team, captured pieces and score;
 * the mode and target; the no-progress count; the commitment.
 */
export function anqiPanel(status, { seats, me } = {}) {
  const a = status.anqi;
  if (!a) return h('div', {});
  const pos = parseAnqiPosition(status.position);
  const rows = SEATS.map((side, i) => {
    const team = a.teams[i];
    const out = !status.live.includes(side);
    const caps = (a.captured[i] || []).map((p) =>
      h('span', { class: `anqi-cap team-${teamOf(p, pos.split2)} ${/[A-Z]/.test(p) ? 'red' : 'black'}`, 'data-piece': p }, CHARS[p] || p),
    );
    const nm = seats && seats[i] ? ` ${seats[i].bot ? `bot ${seats[i].bot}` : seats[i].name}` : '';
    return h(
      'div',
      { class: `anqi-seat${out ? ' out' : ''}`, 'data-seat': side, 'data-team': team ? String(team) : '' },
      teamBadge(team),
      h('span', { class: 'anqi-seat-name' }, seatLabel(side) + nm + (me === side ? ` (${at('youAre')})` : '')),
      h('span', { class: 'muted' }, team ? at('team', { t: team }) : at('teamless')),
      h('span', { class: 'anqi-caps', 'data-captured': (a.captured[i] || []).join('') }, caps.length ? caps : '—'),
      h('span', { class: 'anqi-score', 'data-score': String(a.scores[i]) }, `${at('score')} ${a.scores[i]}`),
    );
  });
  const lines = [
    h('div', { class: 'anqi-mode', id: 'anqi-mode', 'data-mode': a.mode, 'data-target': a.target != null ? String(a.target) : '' }, modeText(a)),
    ...rows,
    h(
      'div',
      { class: 'muted', id: 'anqi-progress', 'data-no-progress': String(a.no_progress) },
      at('noProgress', { n: a.no_progress, max: a.no_progress_limit }),
      ' · ',
      at('hidden', { n: a.hidden }),
    ),
  ];
  if (pos.removed.length) lines.push(h('div', { class: 'muted' }, `${at('removed')}: `, pos.removed.map((p) => CHARS[p] || p).join(' ')));
  if (a.commitment) {
    lines.push(
      h(
        'div',
        { class: 'anqi-commitment muted', id: 'anqi-commitment', 'data-commitment': a.commitment, title: a.commitment },
        `${at('commitment')}: `,
        h('code', {}, `${a.commitment.slice(0, 16)}…`),
      ),
    );
  }
  lines.push(...fairDealLines(status, { me }));
  lines.push(h('div', { class: 'muted' }, h('a', { href: '#/rules/anqi-board', id: 'anqi-rules-link' }, at('rulesLink'))));
  return h('div', { class: 'anqi-panel', id: 'anqi-panel' }, ...lines);
}

/**
 * The seat-entropy deal as the game page shows it (docs/ANQI-DEAL.md §4):
 * the server's seed hash, the seats' seeds (sent or not) and this player's
 * own seed; before the deal, what it means in plain words and a link to the
 * rules page's section on it.
 */
export function fairDealLines(status, { me } = {}) {
  const a = status.anqi;
  if (!a || !a.server_hash) return [];
  const seeds = a.seeds || [null, null, null];
  const out = [
    h('div', { class: 'anqi-server-hash muted', id: 'anqi-server-hash', 'data-server-hash': a.server_hash, title: a.server_hash }, `${at('serverHash')}: `, h('code', {}, `${a.server_hash.slice(0, 16)}…`)),
    h(
      'div',
      { class: 'muted', id: 'anqi-seeds', 'data-seeds': seeds.map((x) => (x ? '1' : '0')).join('') },
      `${at('seeds')}: `,
      SEATS.map((side, i) => `${i + 1} ${seeds[i] ? at('seedSent') : at('seedNone')}`).join(' · '),
    ),
  ];
  const mine = me && seeds[SEATS.indexOf(me)];
  if (mine) out.push(h('div', { class: 'muted', id: 'anqi-my-seed', 'data-seed': mine, title: mine }, `${at('mySeed')}: `, h('code', {}, `${mine.slice(0, 16)}…`)));
  if (!a.commitment) out.push(h('p', { class: 'muted', id: 'anqi-fair-deal' }, at('fairDeal'), ' ', h('a', { href: '#/rules/anqi-fair', id: 'anqi-fair-rules' }, at('rulesLink'))));
  return out;
}

/** This browser's seed for game `id` (64 hex digits): drawn once with crypto.getRandomValues, then kept. */
export function anqiSeed(id) {
  const key = `sanguo.anqi.seed.${id}`;
  let seed = null;
  try {
    seed = localStorage.getItem(key);
  } catch {
    /* no storage: a fresh seed */
  }
  if (!seed || !/^[0-9a-f]{64}$/.test(seed)) {
    const b = new Uint8Array(32);
    crypto.getRandomValues(b);
    seed = [...b].map((x) => x.toString(16).padStart(2, '0')).join('');
    try {
      localStorage.setItem(key, seed);
    } catch {
      /* storage is a help, not a must */
    }
  }
  return seed;
}

/** The pending proposal as a line, if any. */
export function proposalText(status) {
  const po = status.pending_offer;
  if (!po) return null;
  return at('proposal', { by: seatLabel(po.by), waiting: po.waiting.map(seatLabel).join(', ') || '—' });
}

/** A flip's action with the character it revealed (`+b2` revealing R: `伡 +b2`). */
export function actionLabel(mv, revealed) {
  const f = /^\+([a-i][1-5])(?:=(.))?$/.exec(mv);
  const id = f && (revealed || f[2]);
  return id ? `${CHARS[id] || id} +${f[1]}` : mv;
}

/** What the game page's move list writes before an action: a flip's revealed character. */
export function flipChar(mv, revealed) {
  const f = /^\+([a-i][1-5])(?:=(.))?$/.exec(mv);
  const id = f && (revealed || f[2]);
  return id ? CHARS[id] || id : '';
}

// ---- the replay page -----------------------------------------------------

/**
 * Rebuilds the positions of a finished anqi game from its record, textually:
 * a flip turns the point's disc up as what it revealed, a move moves, a
 * capture replaces, a 收军 line removes the points it names. Returns the
 * placements after each action (index 0: the start).
 */
export function replayPlacements(initial, moves, notesAfter) {
  let pos = parseAnqiPosition(initial);
  const out = [pos];
  moves.forEach((m, i) => {
    const points = new Map(pos.points);
    const f = /^\+([a-i][1-5])(?:=(.))?$/.exec(m.mv);
    if (f) points.set(f[1], { piece: m.revealed || f[2] || '?' });
    else {
      const mm = /^([a-i][1-5])[-x]([a-i][1-5])$/.exec(m.mv);
      if (mm) {
        const p = points.get(mm[1]);
        points.delete(mm[1]);
        if (p) points.set(mm[2], p);
      }
    }
    for (const text of notesAfter[i] || []) {
      if (!text.startsWith('shoujun ')) continue;
      for (const w of text.split(' ').slice(2)) {
        const r = /^\+?([a-i][1-5])=/.exec(w);
        if (r) points.delete(r[1]);
      }
    }
    pos = { ...pos, points };
    out.push(pos);
  });
  return out;
}

/**
 * Verifies the deal of a finished game record and shows the verdict in `host`
 * (`#anqi-verify`, `data-verified` true/false).
 */
export async function showVerification(host, { gameId, status, moves, notes }) {
  const box = h('div', { class: 'note', id: 'anqi-verify', 'data-verified': 'pending' }, at('verifying'));
  host.replaceChildren(box);
  const a = (status && status.anqi) || {};
  const res = await verifyDeal({ gameId, commitment: a.commitment, layout: a.layout, saltHex: a.salt, reveals: revealsOf(moves, notes) });
  // the seat-entropy deal (docs/ANQI-DEAL.md §4): the server seed against its
  // hash, and the layout and salt re-derived from the seeds
  const seats = a.server_hash ? await verifySeats({ gameId, serverHash: a.server_hash, serverSeed: a.server_seed, seeds: a.seeds, layout: a.layout, saltHex: a.salt }) : null;
  const ok = res.ok && (!seats || seats.ok);
  box.dataset.verified = String(ok);
  if (seats) box.dataset.seatsVerified = String(seats.ok);
  box.className = `note ${ok ? 'good' : 'bad'}`;
  const parts = [];
  if (seats) parts.push(h('strong', { id: 'anqi-seats-verdict' }, seats.ok ? at('seatsVerified') : at('seatsNotVerified')), ' ');
  if (res.ok) parts.push(h('strong', {}, at('verified', { n: res.flips })));
  else parts.push(h('strong', {}, at('notVerified')));
  const reasons = [...(seats ? seats.reasons : []), ...res.reasons];
  box.replaceChildren(...parts);
  if (reasons.length) box.append(h('ul', {}, reasons.map((r) => h('li', {}, r))));
  // each check, passed or not
  const checks = [
    ...(seats ? [['hash', seats.hash], ['layout', seats.layout], ['salt', seats.salt]] : []),
    ['commitment', res.commitmentOk],
    ['flips', res.revealsOk],
  ];
  box.append(h('ul', { class: 'anqi-checks', id: 'anqi-checks' }, checks.map(([k, pass]) => h('li', { 'data-check': k, 'data-pass': String(pass) }, `${pass ? '✓' : '✗'} ${at(`check_${k}`)}`))));
  if (a.layout) {
    box.append(
      h('div', { class: 'muted' }, `${at('layout')}: `, h('code', { id: 'anqi-layout' }, a.layout)),
      h('div', { class: 'muted' }, `${at('salt')}: `, h('code', { id: 'anqi-salt' }, a.salt || '')),
      h('div', { class: 'muted' }, `${at('commitment')}: `, h('code', {}, a.commitment || '')),
    );
    if (a.server_seed) {
      box.append(
        h('div', { class: 'muted' }, `${at('serverSeed')}: `, h('code', { id: 'anqi-server-seed' }, a.server_seed)),
        h('div', { class: 'muted' }, `${at('serverHash')}: `, h('code', {}, a.server_hash || '')),
        h('div', { class: 'muted' }, `${at('seeds')}: `, ...(a.seeds || []).map((x, i) => h('div', {}, h('code', { 'data-seat-seed': SEATS[i] }, `${i + 1}: ${x || at('seedNone')}`)))),
      );
    }
  }
  return { ...res, ok, seats };
}

/**
 * The anqi parts of the game page (game.js asks for them once, from the
 * game's settings, and calls them where 三国象棋 draws its own): the board,
 * the panel, the notes, the actions (resign, the scoring proposal as the
 * offer/answer buttons) and the result.
 * `ctx`: {host (the board's element), send(msg), note(cls, text, ms), onRefused(point)}.
 */
export function anqiGamePart(ctx) {
  const part = { confirm: null, status: null };
  const board = new AnqiBoard(ctx.host, {
    onAction: (text) => {
      const s = part.status;
      if (!s) return;
      if (ctx.send({ type: 'move', ply: s.ply, mv: text })) board.updateAnqi({ pos: parseAnqiPosition(s.position), legal: [], last: board.last, interactive: false });
    },
    onRefused: (from, to) => ctx.onRefused && ctx.onRefused(from, to),
  });
  part.board = board;
  part.sideName = (side) => seatLabel(side);
  /** The clock badge: the seat's number inside its team's rim colour. */
  part.badge = (side, status) => {
    const team = status && status.anqi ? status.anqi.teams[SEATS.indexOf(side)] : null;
    const b = teamBadge(team);
    b.textContent = String(SEATS.indexOf(side) + 1);
    return b;
  };
  /** Draws the position; `last` is {from, to} of the last action (a flip: from = to). */
  part.renderBoard = (g, { interactive, last }) => {
    part.status = g.status;
    if (g.status.anqi) {
      rememberCommitment(g.id, g.status.anqi.commitment);
      rememberCommitment(g.id, g.status.anqi.server_hash, 'server_hash');
    }
    board.updateAnqi({ pos: parseAnqiPosition(g.status.position), legal: interactive ? g.status.legal_moves : [], last, interactive });
  };
  part.panel = (g, me) =>
    g.phase === 'open'
      ? h(
          'div',
          { class: 'anqi-panel', id: 'anqi-panel' },
          h('div', { class: 'muted' }, h('a', { href: '#/rules/anqi-board', id: 'anqi-rules-link' }, at('rulesLink'))),
          // a full table whose deal waits for the seats' seeds (at most 10 s)
          g.seats && g.seats.every(Boolean) && g.status.anqi && g.status.anqi.server_hash ? h('div', { class: 'note warn', id: 'anqi-seeding' }, at('seeding')) : null,
          ...fairDealLines(g.status, { me }),
        )
      : anqiPanel(g.status, { seats: g.seats, me });
  /**
   * A seated player whose seat has no seed yet while the deal waits (a seat
   * the server placed, as a tournament's): sends this browser's seed, once.
   */
  part.sendSeed = (g, me) => {
    const a = g.status.anqi;
    if (g.phase !== 'open' || !me || !a || !a.server_hash || !a.seeds || a.seeds[SEATS.indexOf(me)] || part.seedSent) return;
    if (ctx.send({ type: 'seed', seed: anqiSeed(g.id) })) part.seedSent = true;
  };
  /** Notes under the clocks while the game runs: the proposal, the no-progress count near its limit. */
  part.notes = (g) => {
    const out = [];
    const s = g.status;
    const p = proposalText(s);
    if (p) out.push(h('div', { class: 'note warn', id: 'offer-note' }, p));
    const a = s.anqi;
    if (a && a.no_progress_limit && a.no_progress >= a.no_progress_limit * 0.6) out.push(h('div', { class: 'note warn counter' }, at('noProgress', { n: a.no_progress, max: a.no_progress_limit })));
    return out;
  };
  /** The last action as `{from, to}` (a flip: `from === to`). */
  part.split = (mv) => {
    const f = /^\+([a-i][1-5])/.exec(mv);
    if (f) return { from: f[1], to: f[1] };
    const m = /^([a-i][1-5])[-x]([a-i][1-5])$/.exec(mv);
    return m ? { from: m[1], to: m[2] } : { from: null, to: null };
  };
  part.moveLabel = flipChar;
  /** Resign and the scoring proposal (申请计分) as the offer/answer buttons. */
  part.actions = (g, me, { actionsEl, confirmEl, t, render }) => {
    const s = g.status;
    const a = s.anqi || {};
    const left = a.proposals_left ? a.proposals_left[SEATS.indexOf(me)] : 0;
    const resign = h('button', { type: 'button', class: 'danger', id: 'resign-btn' }, t('resign'));
    resign.addEventListener('click', () => {
      part.confirm = 'resign';
      render();
    });
    const offer = h('button', { type: 'button', id: 'offer-btn' }, at('propose'));
    offer.disabled = left <= 0 || !!s.pending_offer;
    offer.addEventListener('click', () => {
      part.confirm = 'propose';
      render();
    });
    actionsEl.replaceChildren(resign, offer, h('span', { class: 'muted' }, at('proposalsLeft', { n: left })));
    confirmEl.replaceChildren();
    if (s.pending_offer && s.pending_offer.waiting.includes(me)) {
      const acc = h('button', { type: 'button', class: 'primary', id: 'accept-draw' }, t('accept'));
      const dec = h('button', { type: 'button', id: 'decline-draw' }, t('decline'));
      acc.addEventListener('click', () => ctx.send({ type: 'answer_draw', accept: true }));
      dec.addEventListener('click', () => ctx.send({ type: 'answer_draw', accept: false }));
      confirmEl.replaceChildren(h('div', { class: 'confirm-box', id: 'draw-answer' }, h('strong', {}, proposalText(s)), h('div', { class: 'actions' }, acc, dec)));
      return;
    }
    if (part.confirm) {
      const kind = part.confirm;
      const ok = h('button', { type: 'button', class: 'primary', id: 'confirm-yes' }, t('confirm'));
      const no = h('button', { type: 'button', id: 'confirm-no' }, t('cancel'));
      ok.addEventListener('click', () => {
        ctx.send(kind === 'resign' ? { type: 'resign' } : { type: 'offer_draw' });
        part.confirm = null;
        render();
      });
      no.addEventListener('click', () => {
        part.confirm = null;
        render();
      });
      confirmEl.replaceChildren(h('div', { class: 'confirm-box', id: 'confirm-box' }, h('p', {}, kind === 'resign' ? t('resignConfirm3') : at('proposeConfirm')), h('div', { class: 'actions' }, ok, no)));
    }
  };
  /** The result: why it ended, each seat's place and score. */
  part.result = (result, seats) => anqiResult(result, seats);
  /** A record line (`claim 1 2`, `pass 3`, `out 2 annihilated`, …) as a transient note. */
  part.noted = (ev) => ctx.note('', notedText(ev.text), 8000);
  return part;
}

/** A §11.5 record line in words. */
export function notedText(text) {
  const w = text.split(' ');
  const seat = (n) => at('seat', { n });
  const zh = getLang() === 'zh';
  switch (w[0]) {
    case 'claim':
      return zh ? `${seat(w[1])} 认领第${w[2]}队` : `${seat(w[1])} claims team ${w[2]}`;
    case 'assign':
      return zh ? `${seat(w[1])} 分得第${w[2]}队` : `${seat(w[1])} is given team ${w[2]}`;
    case 'pass':
      return zh ? `${seat(w[1])} 无子可动，跳过` : `${seat(w[1])} has no legal action and passes`;
    case 'out':
      return zh ? `${seat(w[1])} 出局（${w[2]}）` : `${seat(w[1])} is out (${w[2]})`;
    case 'shoujun':
      return zh ? `${seat(w[1])} 收军` : `${seat(w[1])} recovers its army (收军)`;
    default:
      return text;
  }
}

/** The result of an anqi game: reason, places and scores. */
export function anqiResult(result, seats) {
  const e = result.ending || {};
  const head = e.kind === 'aborted' ? at('reason_aborted') : at(`reason_${e.reason || e.kind}`);
  const lines = [h('strong', {}, head)];
  if (result.placing) {
    const order = [0, 1, 2].sort((x, y) => result.placing[x] - result.placing[y]);
    lines.push(
      h(
        'div',
        { id: 'anqi-placing', 'data-placing': result.placing.join(',') },
        order.map((i) => {
          const nm = seats && seats[i] ? ` ${seats[i].bot ? `bot ${seats[i].bot}` : seats[i].name}` : '';
          const score = result.scores ? ` · ${result.scores[i]}` : '';
          return h('div', { 'data-seat': SEATS[i] }, `${at('place', { n: result.placing[i] })} ${seatLabel(SEATS[i])}${nm}${score}`);
        }),
      ),
    );
  }
  return lines;
}

// ---- the replay page -----------------------------------------------------

/** Remembers the commitment this browser saw while the game ran (the replay compares). */
export function rememberCommitment(id, commitment, what = 'commitment') {
  try {
    const key = `sanguo.anqi.${what}.${id}`;
    if (commitment && !localStorage.getItem(key)) localStorage.setItem(key, commitment);
  } catch {
    /* storage is a help, not a must */
  }
}

function seenCommitment(id, what = 'commitment') {
  try {
    return localStorage.getItem(`sanguo.anqi.${what}.${id}`);
  } catch {
    return null;
  }
}

/**
 * The replay of a finished anqi game from its published record (the §11.5
 * lines of `status.anqi.record`): step through the actions and verify the deal.
 * `snap` is the game's snapshot (GET /api/games/{id}), `rec` its record.
 */
export function mountAnqiReplay(root, id, snap, rec, { t, h: hh = h }) {
  root.replaceChildren();
  const boardWrap = hh('div', { class: 'board-wrap' });
  const info = hh('div', { class: 'status-line', id: 'replay-info' });
  const verifyEl = hh('div', { id: 'anqi-verify-box' });
  const resultEl = hh('div', { id: 'replay-result' });
  const controls = hh('div', { class: 'replay-controls' });
  const movesEl = hh('div', { class: 'movelist clickable', id: 'movelist' });
  const page = hh(
    'div',
    { class: 'game', id: 'replay', 'data-game': id, 'data-variant': 'anqi' },
    hh('div', { class: 'board-col' }, boardWrap),
    hh('div', { class: 'panel' }, hh('div', { class: 'actions' }, hh('a', { href: '#/' }, t('toLobby'))), info, controls, verifyEl, resultEl, hh('h2', {}, t('moves')), movesEl),
  );
  root.appendChild(page);
  const board = new AnqiBoard(boardWrap, {});
  const a = snap.status.anqi || {};
  const lines = a.record || [];
  // the actions and, after each, the record lines it caused (claims, 收军, …)
  const actions = [];
  const after = [];
  for (const line of lines) {
    if (/^(\+[a-i][1-5]=.|[a-i][1-5][-x][a-i][1-5])$/.test(line)) {
      actions.push({ mv: line });
      after.push([]);
    } else if (after.length) after[after.length - 1].push(line);
  }
  const initial = rec.initial_position || snap.status.position;
  const positions = replayPlacements(initial, actions, after);
  let cur = positions.length - 1;
  const btn = (label, bid, f) => {
    const b = hh('button', { type: 'button', id: bid, class: 'small' }, label);
    b.addEventListener('click', f);
    return b;
  };
  const slider = hh('input', { type: 'range', min: '0', max: String(positions.length - 1), value: String(cur), id: 'replay-slider' });
  slider.addEventListener('input', () => go(Number(slider.value)));
  controls.append(
    btn('|◀ ' + t('start'), 'rp-start', () => go(0)),
    btn('◀ ' + t('back'), 'rp-back', () => go(cur - 1)),
    btn(t('forward') + ' ▶', 'rp-fwd', () => go(cur + 1)),
    btn(t('end') + ' ▶|', 'rp-end', () => go(positions.length - 1)),
    slider,
  );
  const sides = (rec.moves || []).map((m) => m.side);
  movesEl.replaceChildren(
    ...actions.map((m, i) => {
      const e = hh('span', { class: 'mv', 'data-ply': String(i) }, `${i + 1}. `, sides[i] ? `${seatLabel(sides[i])} ` : '', actionLabel(m.mv));
      e.addEventListener('click', () => go(i + 1));
      return e;
    }),
  );
  function go(i) {
    cur = Math.max(0, Math.min(positions.length - 1, i));
    slider.value = String(cur);
    const m = cur > 0 ? actions[cur - 1] : null;
    const f = m && /^\+([a-i][1-5])/.exec(m.mv);
    const mm = m && /^([a-i][1-5])[-x]([a-i][1-5])$/.exec(m.mv);
    board.updateAnqi({ pos: positions[cur], legal: [], last: f ? { from: f[1], to: f[1] } : mm ? { from: mm[1], to: mm[2] } : null, interactive: false });
    page.dataset.ply = String(cur);
    info.replaceChildren(hh('div', {}, m ? `${cur}. ${sides[cur - 1] ? seatLabel(sides[cur - 1]) + ' ' : ''}${m.mv}` : t('start')), hh('div', { class: 'muted' }, a.mode ? modeText(a) : ''));
    for (const e of movesEl.children) e.classList.toggle('cur', Number(e.dataset.ply) === cur - 1);
  }
  const onKey = (e) => {
    if (e.key === 'ArrowLeft') go(cur - 1);
    else if (e.key === 'ArrowRight') go(cur + 1);
  };
  document.addEventListener('keydown', onKey);
  if (snap.result) resultEl.replaceChildren(hh('div', { class: 'note good result', id: 'result' }, ...anqiResult(snap.result, snap.seats)));
  go(cur);
  // the verdict: the published deal against the commitment announced at the start
  const seen = seenCommitment(id);
  const seenHash = seenCommitment(id, 'server_hash');
  const notes = [];
  after.forEach((l) => notes.push(...l));
  const reveals = revealsOf(actions, notes);
  showVerification(verifyEl, { gameId: id, status: snap.status, moves: actions, notes }).then((res) => {
    if (seen && seen !== a.commitment) {
      const box = verifyEl.querySelector('#anqi-verify');
      box.dataset.verified = 'false';
      box.className = 'note bad';
      box.prepend(hh('strong', {}, `${at('notVerified')} the commitment announced now (${a.commitment}) is not the one this browser saw during the game (${seen}).`));
    }
    if (seenHash && seenHash !== a.server_hash) {
      const box = verifyEl.querySelector('#anqi-verify');
      box.dataset.verified = 'false';
      box.dataset.seatsVerified = 'false';
      box.className = 'note bad';
      box.prepend(hh('strong', {}, `${at('seatsNotVerified')} the server seed hash published now (${a.server_hash}) is not the one this browser saw during the game (${seenHash}).`));
    }
    page.dataset.loaded = 'true';
    page.dataset.reveals = String(reveals.length);
    return res;
  });
  return {
    destroy() {
      document.removeEventListener('keydown', onKey);
    },
  };
}

// ---- the lobby's anqi options ---------------------------------------------

const OPT_TEXT = {
  en: { mode: 'Mode', target: 'Target (points)', scoring: 'Deadlock scoring', rounds: 'No-progress limit (rounds)', options: 'Options', fixedSeats: 'Keep the seats as taken (no random seating)' },
  zh: { mode: '玩法', target: '目标分', scoring: '僵局计分', rounds: '无进展上限（轮）', options: '选项', fixedSeats: '按入座顺序，不随机排座' },
};
const ot = (k) => (OPT_TEXT[getLang()] || OPT_TEXT.en)[k];

/**
 * The create form's 三国暗棋 block (AnqiOptions, protocol/README.md): mode and
 * target, deadlock scoring, no-progress limit, split2/enhanced/double/fanchi/xqlegs,
 * fixed seats. `{el, value()}`; `value()` gives the `anqi` object of the create body.
 */
export function anqiOptionsForm() {
  const sel = (id, opts) => h('select', { id }, opts.map(([v, label]) => h('option', { value: v }, label)));
  const mode = sel('anqi-mode', [
    ['annihilation', at('mode_annihilation')],
    ['race', at('mode_race', { n: 'N' })],
    ['shoujun', at('mode_shoujun')],
  ]);
  const target = h('input', { id: 'anqi-target', type: 'number', min: '1', max: '2000', step: '1', value: '200' });
  const targetRow = h('label', { class: 'form-row', hidden: true }, ot('target'), target);
  mode.addEventListener('change', () => (targetRow.hidden = mode.value !== 'race'));
  const scoring = sel('anqi-scoring', [
    ['net', at('scoring_net')],
    ['remaining_points', at('scoring_remaining_points')],
    ['remaining_count', at('scoring_remaining_count')],
  ]);
  const rounds = h('input', { id: 'anqi-rounds', type: 'number', min: '10', max: '100', step: '1', value: '30' });
  const box = (id, label) => {
    const input = h('input', { type: 'checkbox', id: `anqi-${id}` });
    return { input, el: h('label', { class: 'inline' }, input, label) };
  };
  const flags = [box('split2', 'split2 (第二种分队)'), box('enhanced', 'enhanced (强化将士象)'), box('double', 'double (二连)'), box('fanchi', 'fanchi (翻吃)'), box('xqlegs', 'xqlegs (拐马脚/塞象眼)')];
  const fixed = box('fixed-seats', ot('fixedSeats'));
  const el = h(
    'fieldset',
    { id: 'anqi-options', class: 'anqi-options', hidden: true },
    h('legend', {}, '三国暗棋'),
    h('p', { class: 'muted' }, h('a', { href: '#/rules/anqi-board', id: 'anqi-rules-lobby' }, at('rulesLink'))),
    h('label', { class: 'form-row' }, ot('mode'), mode),
    targetRow,
    h('label', { class: 'form-row' }, ot('scoring'), scoring),
    h('label', { class: 'form-row' }, ot('rounds'), rounds),
    h('div', { class: 'form-row' }, h('span', {}, ot('options')), ...flags.map((f) => f.el), fixed.el),
  );
  return {
    el,
    value() {
      const o = { mode: mode.value, scoring: scoring.value };
      if (mode.value === 'race') o.target = Number(target.value) || 200;
      if (Number(rounds.value) !== 30) o.no_progress_rounds = Number(rounds.value);
      for (const [i, k] of ['split2', 'enhanced', 'double', 'fanchi', 'xqlegs'].entries()) if (flags[i].input.checked) o[k] = true;
      if (fixed.input.checked) o.fixed_seats = true;
      return o;
    },
  };
}
