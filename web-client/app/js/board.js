// The board as SVG, drawn from the description the server sends for the
// game's variant (GET /api/variants: points, lines, arcs, areas, labels, the
// seats' views, the pieces' characters) and rotated so that the viewer's seat
// is at the bottom. Pieces are squares (the seed's pieces are cubes): white
// with black characters, black with white, yellow with red. Every point
// carries data-point / data-x / data-y (board coordinates).

import { boardOf } from './variants.js';

const NS = 'http://www.w3.org/2000/svg';
const S = 40; // pixels per line spacing in the SVG's user space

function rotate([x, y], deg) {
  const a = (deg * Math.PI) / 180;
  const c = Math.cos(a);
  const s = Math.sin(a);
  return [x * c - y * s, x * s + y * c];
}

function el(name, attrs = {}, parent) {
  const e = document.createElementNS(NS, name);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  if (parent) parent.appendChild(e);
  return e;
}

const r3 = (v) => Math.round(v * 1000) / 1000;

export class Board {
  /**
   * @param {HTMLElement} host where the SVG goes
   * @param {object} opts {onMove(from, to), onRefused(from, to), variant (default sanguo), fade}:
   *   a legal move made; an attempt that is not in the legal list (`from` null: a click on
   *   a board that takes no move now), so that the page can say why
   */
  constructor(host, opts = {}) {
    this.host = host;
    this.onMove = opts.onMove || (() => {});
    this.onRefused = opts.onRefused || (() => {});
    this.mover = null; // whose pieces may be picked up (even without a legal move, to learn why)
    this.fade = opts.fade !== false; // an eliminated side's pieces fade out (not when jumping in a replay)
    this.variant = opts.variant || 'sanguo';
    this.desc = boardOf(this.variant);
    this.points = this.desc.points;
    this.byName = new Map(this.points.map((p) => [p.name, p]));
    this.view = this.desc.views[0].side;
    this.placement = new Map();
    this.legal = new Map(); // from -> [to]
    this.selected = null;
    this.last = null;
    this.checked = [];
    /** Colours whose kings are marked allied (三国演弈棋). */
    this.allied = [];
    this.interactive = false;
    this.ghosts = [];
    this.animate = null;
    const ext = this.desc.extent;
    this.svg = el('svg', {
      id: 'board',
      // every view spans the same box
      viewBox: `${-ext.half_width * S} ${ext.top * S} ${2 * ext.half_width * S} ${(ext.bottom - ext.top) * S}`,
      role: 'img',
      'aria-label': 'board',
      'data-variant': this.variant,
    });
    host.appendChild(this.svg);
    this.gLines = el('g', { class: 'lines' }, this.svg);
    this.gMarks = el('g', { class: 'marks' }, this.svg);
    this.gPoints = el('g', { class: 'points' }, this.svg);
    this.gPieces = el('g', { class: 'pieces' }, this.svg);
    this.gDest = el('g', { class: 'dests' }, this.svg);
    this.gCoords = el('g', { class: 'coords' }, this.svg);
    this.coords = false;
    this.recent = []; // each opponent's last move since the viewer's own: [{from, to, side}]
    this.drag = null;
    this.svg.addEventListener('pointerdown', (e) => this.pointerDown(e));
    this.svg.addEventListener('pointermove', (e) => this.pointerMove(e));
    this.svg.addEventListener('pointerup', (e) => this.pointerUp(e));
    this.svg.addEventListener('pointercancel', () => this.cancelDrag());
    this.drawBoard();
  }

  /** The rotation of the current view, degrees. */
  rotation() {
    const v = this.desc.views.find((w) => w.side === this.view);
    return v ? v.rotation : 0;
  }

  /** Board coordinates → SVG coordinates for the current view. */
  screen(x, y) {
    const [rx, ry] = rotate([x, y], -this.rotation());
    return [rx * S, -ry * S];
  }

  /** A piece's character. */
  char(p) {
    return (this.desc.pieces[p.side] || {})[p.piece] || p.piece;
  }

  pt(name) {
    const p = this.byName.get(name);
    return this.screen(p.x, p.y);
  }

  setView(side) {
    if (!this.desc.views.some((v) => v.side === side)) side = this.desc.views[0].side;
    if (side === this.view) return;
    this.view = side;
    this.drawBoard();
    this.renderPieces();
    this.renderCoords();
  }

  /** Shows or hides every point's name, as the move list writes it (W52, O, …). */
  setCoords(on) {
    this.coords = !!on;
    this.svg.dataset.coords = String(this.coords);
    this.renderCoords();
  }

  renderCoords() {
    this.gCoords.replaceChildren();
    if (!this.coords) return;
    for (const p of this.points) {
      const [x, y] = this.screen(p.x, p.y);
      el('text', { x: r3(x + 0.2 * S), y: r3(y + 0.36 * S), class: 'coord', 'data-coord': p.name }, this.gCoords).textContent = p.name;
    }
  }

  drawBoard() {
    this.svg.setAttribute('data-view', this.view);
    this.svg.setAttribute('data-rotation', String(-this.rotation()));
    this.svg.setAttribute('data-scale', String(S));
    this.gLines.replaceChildren();
    this.gPoints.replaceChildren();
    const fig = this.desc;
    // tinted areas under the lines
    for (const area of fig.areas) {
      const c = area.points.map((n) => this.pt(n).map(r3).join(',')).join(' ');
      el('polygon', { points: c, class: area.class }, this.gLines);
    }
    const path = [];
    for (const [a, b] of fig.segments) {
      const [x1, y1] = this.pt(a);
      const [x2, y2] = this.pt(b);
      path.push(`M${r3(x1)} ${r3(y1)}L${r3(x2)} ${r3(y2)}`);
    }
    for (const arc of fig.arcs) {
      const [x1, y1] = this.pt(arc.from);
      const [x2, y2] = this.pt(arc.to);
      path.push(`M${r3(x1)} ${r3(y1)}A${arc.radius * S} ${arc.radius * S} 0 0 ${arc.sweep} ${r3(x2)} ${r3(y2)}`);
    }
    el('path', { d: path.join(''), class: 'line' }, this.gLines);
    const dashed = fig.dashed
      .map(([a, b]) => {
        const [x1, y1] = this.pt(a);
        const [x2, y2] = this.pt(b);
        return `M${r3(x1)} ${r3(y1)}L${r3(x2)} ${r3(y2)}`;
      })
      .join('');
    el('path', { d: dashed, class: 'line dashed' }, this.gLines);
    for (const n of fig.rings) {
      const [ox, oy] = this.pt(n);
      el('circle', { cx: ox, cy: oy, r: 0.28 * S, class: 'centre' }, this.gLines);
    }
    for (const label of fig.labels) {
      const [lx, ly] = this.screen(label.x, label.y);
      const t = el('text', { x: r3(lx), y: r3(ly), class: label.class }, this.gLines);
      t.textContent = label.text;
    }
    for (const p of this.points) {
      const [x, y] = this.screen(p.x, p.y);
      el(
        'circle',
        {
          cx: r3(x),
          cy: r3(y),
          r: 0.07 * S,
          class: 'pt',
          'data-point': p.name,
          'data-index': p.index,
          'data-x': p.x.toFixed(9),
          'data-y': p.y.toFixed(9),
        },
        this.gPoints,
      );
    }
    this.renderMarks();
  }

  /** Sets what to show. */
  update({ placement, legal, last, recent, checked, allied, interactive, mover }) {
    this.animate = null;
    if (placement) {
      const old = this.placement;
      // a move seen for the first time slides from its origin
      if (last && old.has(last.from) && placement.has(last.to) && !placement.has(last.from)) {
        const p = old.get(last.from);
        const q = placement.get(last.to);
        if (p && q && p.side === q.side && p.piece === q.piece) this.animate = last;
      }
      // a side that left the board: its pieces fade out instead of vanishing
      const gone = new Set([...old.values()].map((p) => p.side).filter((sd) => ![...placement.values()].some((q) => q.side === sd)));
      if (gone.size && this.fade) {
        this.ghosts = [...old].filter(([, p]) => gone.has(p.side));
        clearTimeout(this.ghostTimer);
        this.ghostTimer = setTimeout(() => {
          this.ghosts = [];
          this.renderPieces();
        }, 1600);
      }
      // a piece that changed owner where it stands (兵力收编, the 汉 force handed over): it changes colour
      this.recoloured = new Map();
      for (const [pt, q] of placement) {
        const p = old.get(pt);
        if (p && p.piece === q.piece && p.side !== q.side && !(last && (last.to === pt || last.from === pt))) this.recoloured.set(pt, p.side);
      }
      this.placement = placement;
    }
    if (legal) this.legal = legal;
    if (last !== undefined) this.last = last;
    if (recent !== undefined) this.recent = recent;
    if (checked) this.checked = checked;
    if (allied) this.allied = allied;
    if (interactive !== undefined) this.interactive = interactive;
    if (mover !== undefined) this.mover = mover;
    if (this.selected && !(this.interactive && this.selectable(this.selected))) this.selected = null;
    this.renderPieces();
    this.renderMarks();
  }

  renderMarks() {
    this.gMarks.replaceChildren();
    // every opponent's move since the viewer's own (or just the last move), tinted by its side
    const shown = this.recent && this.recent.length ? this.recent : this.last ? [this.last] : [];
    for (const m of shown) {
      for (const [n, cls] of [[m.from, 'last-from'], [m.to, 'last-to']]) {
        if (!this.byName.has(n)) continue;
        const [x, y] = this.pt(n);
        el('rect', { x: x - 0.48 * S, y: y - 0.48 * S, width: 0.96 * S, height: 0.96 * S, rx: 4, class: `mark ${cls}${m.side ? ` by-${m.side}` : ''}`, 'data-by': m.side || null }, this.gMarks);
      }
    }
    for (const [pt, p] of this.placement) {
      if (p.piece === 'K' && this.checked.includes(p.side)) {
        const [x, y] = this.pt(pt);
        el('circle', { cx: x, cy: y, r: 0.62 * S, class: 'mark in-check' }, this.gMarks);
      }
      // an alliance (三国演弈棋): the allied kings ringed, with 盟
      if (p.piece === 'K' && (this.allied || []).includes(p.side)) {
        const [x, y] = this.pt(pt);
        const g = el('g', { class: 'mark allied', 'data-allied': p.side }, this.gMarks);
        el('circle', { cx: x, cy: y, r: 0.64 * S, class: 'allied-ring' }, g);
        el('text', { x: x + 0.6 * S, y: y - 0.6 * S, class: 'allied-tag' }, g).textContent = '盟';
      }
    }
    this.gDest.replaceChildren();
    if (this.selected) {
      const [sx, sy] = this.pt(this.selected);
      el('rect', { x: sx - 0.5 * S, y: sy - 0.5 * S, width: S, height: S, rx: 5, class: 'mark selected' }, this.gMarks);
      for (const to of this.legal.get(this.selected) || []) {
        const [x, y] = this.pt(to);
        const capture = this.placement.has(to);
        el('circle', { cx: x, cy: y, r: capture ? 0.5 * S : 0.17 * S, class: capture ? 'dest capture' : 'dest', 'data-dest': to }, this.gDest);
      }
    }
  }

  renderPieces() {
    this.gPieces.replaceChildren();
    for (const [pt, p] of this.ghosts || []) {
      const [x, y] = this.pt(pt);
      const g = el('g', { class: `piece leaving side-${p.side}`, transform: `translate(${r3(x)} ${r3(y)})` }, this.gPieces);
      el('rect', { x: -0.42 * S, y: -0.42 * S, width: 0.84 * S, height: 0.84 * S, rx: 0.12 * S, class: 'body' }, g);
      el('text', { x: 0, y: 0.015 * S, class: 'char' }, g).textContent = this.char(p);
    }
    for (const [pt, p] of this.placement) {
      if (!this.byName.has(pt)) continue;
      const [x, y] = this.pt(pt);
      const g = el('g', { class: `piece side-${p.side}`, 'data-piece': `${p.side}${p.piece}`, 'data-at': pt, transform: `translate(${r3(x)} ${r3(y)})` }, this.gPieces);
      if (this.interactive && this.legal.has(pt)) g.classList.add('movable');
      el('rect', { x: -0.42 * S, y: -0.42 * S, width: 0.84 * S, height: 0.84 * S, rx: 0.12 * S, class: 'body' }, g);
      if (p.origin) {
        // held by another owner than its first: a frame in the first owner's colour
        g.classList.add('held');
        g.setAttribute('data-origin', p.origin);
        el('rect', { x: -0.33 * S, y: -0.33 * S, width: 0.66 * S, height: 0.66 * S, rx: 0.08 * S, class: `origin origin-${p.origin}` }, g);
      }
      const was = this.recoloured && this.recoloured.get(pt);
      if (was) {
        // the old colour fades out over the new one
        g.classList.add('recoloured');
        const old = el('rect', { x: -0.42 * S, y: -0.42 * S, width: 0.84 * S, height: 0.84 * S, rx: 0.12 * S, class: `body was was-${was}` }, g);
        old.addEventListener('animationend', () => old.remove());
      }
      const t = el('text', { x: 0, y: 0.015 * S, class: 'char' }, g);
      t.textContent = this.char(p);
      if (this.animate && this.animate.to === pt) {
        const [fx, fy] = this.pt(this.animate.from);
        g.style.transform = `translate(${r3(fx - x)}px, ${r3(fy - y)}px)`;
        requestAnimationFrame(() =>
          requestAnimationFrame(() => {
            g.style.transition = 'transform 180ms ease-out';
            g.style.transform = '';
          }),
        );
      }
    }
    this.animate = null;
    this.recoloured = null;
  }

  /** The point nearest to an event, if within reach. */
  pointAt(e) {
    const ctm = this.svg.getScreenCTM();
    if (!ctm) return null;
    const p = new DOMPoint(e.clientX, e.clientY).matrixTransform(ctm.inverse());
    let best = null;
    let bestD = Infinity;
    for (const q of this.points) {
      const [x, y] = this.screen(q.x, q.y);
      const d = Math.hypot(x - p.x, y - p.y);
      if (d < bestD) {
        bestD = d;
        best = q.name;
      }
    }
    return { name: bestD < 0.55 * S ? best : null, x: p.x, y: p.y };
  }

  select(name) {
    this.selected = name;
    this.renderPieces();
    this.renderMarks();
  }

  /** A piece that may be picked up: one with legal moves, or any of the mover's. */
  selectable(name) {
    if (this.legal.has(name)) return true;
    const p = this.placement.get(name);
    return !!(p && this.mover && p.side === this.mover);
  }

  tryMove(from, to) {
    if ((this.legal.get(from) || []).includes(to)) {
      this.selected = null;
      this.onMove(from, to);
      return true;
    }
    return false;
  }

  pointerDown(e) {
    const hit = this.pointAt(e);
    if (!this.interactive) {
      if (hit && hit.name && this.placement.has(hit.name)) this.onRefused(null, hit.name);
      return;
    }
    if (!hit || !hit.name) return;
    e.preventDefault();
    if (this.selected && this.tryMove(this.selected, hit.name)) return;
    if (this.selected && this.selected !== hit.name && !this.selectable(hit.name)) {
      // a destination the piece may not go to: say why
      const from = this.selected;
      this.select(null);
      this.onRefused(from, hit.name);
      return;
    }
    if (!this.selected && this.placement.has(hit.name) && !this.selectable(hit.name)) {
      this.onRefused(null, hit.name); // another side's piece
      return;
    }
    if (this.selectable(hit.name)) {
      const wasSelected = this.selected === hit.name;
      this.select(hit.name);
      const g = this.gPieces.querySelector(`[data-at="${hit.name}"]`);
      this.drag = { from: hit.name, g, startX: hit.x, startY: hit.y, moved: false, wasSelected };
      try {
        this.svg.setPointerCapture(e.pointerId);
      } catch {
        /* synthetic events */
      }
    } else if (this.selected) {
      this.select(null);
    }
  }

  pointerMove(e) {
    if (!this.drag) return;
    const hit = this.pointAt(e);
    if (!hit) return;
    const d = this.drag;
    if (!d.moved && Math.hypot(hit.x - d.startX, hit.y - d.startY) < 0.2 * S) return;
    d.moved = true;
    if (d.g) {
      d.g.classList.add('dragging');
      d.g.setAttribute('transform', `translate(${r3(hit.x)} ${r3(hit.y)})`);
      this.gPieces.appendChild(d.g);
    }
  }

  pointerUp(e) {
    const d = this.drag;
    if (!d) return;
    this.drag = null;
    if (!d.moved) {
      // a plain click: toggle selection off if it was already selected
      if (d.wasSelected) this.select(null);
      return;
    }
    const hit = this.pointAt(e);
    if (hit && hit.name && this.tryMove(d.from, hit.name)) return;
    this.renderPieces();
    if (hit && hit.name && hit.name !== d.from) {
      this.select(null);
      this.onRefused(d.from, hit.name);
    }
  }

  cancelDrag() {
    if (this.drag) {
      this.drag = null;
      this.renderPieces();
    }
  }
}
