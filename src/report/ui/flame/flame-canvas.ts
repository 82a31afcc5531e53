// The flame graph renderer: draws a ViewTree on one canvas, root row on top. Frames
// narrower than MIN_FRAME_PX are culled with their whole subtree, the canvas height is
// capped and rows are virtualised (a scroller moves a sticky canvas over a tall spacer), so
// the cost of a frame is bounded by what is visible, not by the size of the profile.

import { h } from '../dom.js';
import type { ViewTree } from './tree-builder.js';
import { ANCESTOR_COLOR, DIM_COLORS, FRAME_COLORS, HEAT_STEPS, MATCH_COLOR, ROOT_COLOR } from './flame-colors.js';

import { MAX_CANVAS_HEIGHT, MIN_FRAME_PX, ROW_HEIGHT } from './flame-metrics.js';

export { MAX_CANVAS_HEIGHT, MIN_FRAME_PX, ROW_HEIGHT };

export interface FrameLabels {
  name(frame: number): string;
  /** file:line, or '' when the frame has no source location. */
  where(frame: number): string;
  kind(frame: number): number;
  rootName: string;
}

export interface DrawStats {
  visibleFrames: number;
  drawMs: number;
}

export class FlameCanvas {
  readonly element: HTMLDivElement;
  readonly canvas: HTMLCanvasElement;
  private readonly spacer: HTMLDivElement;
  private tree: ViewTree | null = null;
  private labels: FrameLabels | null = null;
  private zoomNode = 0;
  private match: Uint8Array | null = null;
  private maxSelf = 1;
  private charWidth = 6.6;
  // Rectangles drawn last time, for hit testing.
  private rects = { node: new Int32Array(0), x: new Float64Array(0), w: new Float64Array(0), row: new Int32Array(0), n: 0 };
  stats: DrawStats = { visibleFrames: 0, drawMs: 0 };
  /** Called after every draw (also the ones scrolling and resizing schedule). */
  onDrawn: (() => void) | null = null;
  /** Colours frames by another rule than layer and heat (compare.html's gain or loss per request). */
  colorOf: ((node: number) => string) | null = null;
  private pending = 0;

  constructor(ariaLabel: string) {
    this.canvas = h('canvas', { class: 'flame-canvas', attrs: { role: 'img', 'aria-label': ariaLabel } });
    this.spacer = h('div', { class: 'flame-spacer' });
    this.element = h('div', { class: 'flame-scroll' }, this.canvas, this.spacer);
    this.element.addEventListener('scroll', () => this.schedule(), { passive: true });
    new ResizeObserver(() => this.schedule()).observe(this.element);
  }

  setTree(tree: ViewTree, labels: FrameLabels): void {
    this.tree = tree;
    this.labels = labels;
    this.zoomNode = 0;
    let max = 0;
    for (let i = 0; i < tree.n; i++) if (tree.self[i] > max) max = tree.self[i];
    this.maxSelf = max || 1;
    this.element.scrollTop = 0;
  }

  setSearch(match: Uint8Array | null): void {
    this.match = match;
  }

  get zoom(): number {
    return this.zoomNode;
  }

  setZoom(node: number): void {
    if (this.tree && node >= 0 && node < this.tree.n) this.zoomNode = node;
  }

  private schedule(): void {
    if (this.pending) return;
    this.pending = requestAnimationFrame(() => {
      this.pending = 0;
      this.draw();
    });
  }

  /** Draws now (synchronously) and returns what it cost. */
  draw(): DrawStats {
    const t0 = performance.now();
    const tree = this.tree;
    const width = Math.max(1, this.element.clientWidth);
    const rows = tree ? tree.maxDepth + 1 : 1;
    const height = Math.min(rows * ROW_HEIGHT, MAX_CANVAS_HEIGHT);
    const ctx = this.prepare(width, height, rows);
    this.rects.n = 0;
    if (tree && this.labels) this.paint(ctx, tree, width, height);
    this.stats = { visibleFrames: this.rects.n, drawMs: performance.now() - t0 };
    this.onDrawn?.();
    return this.stats;
  }

  private prepare(width: number, height: number, rows: number): CanvasRenderingContext2D {
    const dpr = window.devicePixelRatio || 1;
    const w = Math.round(width * dpr);
    const hgt = Math.round(height * dpr);
    if (this.canvas.width !== w || this.canvas.height !== hgt) {
      this.canvas.width = w;
      this.canvas.height = hgt;
      this.canvas.style.width = `${width}px`;
      this.canvas.style.height = `${height}px`;
    }
    this.element.style.height = `${height}px`;
    this.spacer.style.height = `${Math.max(0, rows * ROW_HEIGHT - height)}px`;
    const ctx = this.canvas.getContext('2d');
    if (!ctx) throw new Error('canvas 2d context unavailable');
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, width, height);
    ctx.font = '11px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace';
    ctx.textBaseline = 'middle';
    this.charWidth = ctx.measureText('abcdefghij').width / 10 || this.charWidth;
    return ctx;
  }

  private paint(ctx: CanvasRenderingContext2D, tree: ViewTree, width: number, height: number): void {
    const scrollTop = this.element.scrollTop;
    const rowStart = Math.floor(scrollTop / ROW_HEIGHT);
    const rowEnd = rowStart + Math.ceil(height / ROW_HEIGHT) + 1;
    this.ensureRects(Math.min(tree.n, 65536));
    const z = this.zoomNode;
    for (let a = tree.parent[z]; a >= 0; a = tree.parent[a]) {
      if (tree.depth[a] >= rowStart && tree.depth[a] < rowEnd) this.frame(ctx, tree, a, 0, width, scrollTop, ANCESTOR_COLOR);
    }
    const x0 = tree.x[z];
    const scale = width / (tree.total[z] || 1);
    const end = z + tree.size[z];
    let i = z;
    while (i < end) {
      const w = tree.total[i] * scale;
      const d = tree.depth[i];
      if (w < MIN_FRAME_PX || d >= rowEnd) {
        i += tree.size[i];
        continue;
      }
      if (d >= rowStart) this.frame(ctx, tree, i, (tree.x[i] - x0) * scale, w, scrollTop, this.color(tree, i));
      i++;
    }
  }

  private color(tree: ViewTree, i: number): string {
    if (this.colorOf) return this.colorOf(i);
    const f = tree.frame[i];
    if (f < 0) return ROOT_COLOR;
    const kind = this.labels?.kind(f) ?? 0;
    if (this.match && this.match[f]) return MATCH_COLOR;
    const heat = Math.min(HEAT_STEPS - 1, Math.floor(Math.sqrt(tree.self[i] / this.maxSelf) * HEAT_STEPS));
    return (this.match ? DIM_COLORS : FRAME_COLORS)[kind][heat];
  }

  private frame(ctx: CanvasRenderingContext2D, tree: ViewTree, i: number, x: number, w: number, scrollTop: number, color: string): void {
    const y = tree.depth[i] * ROW_HEIGHT - scrollTop;
    ctx.fillStyle = color;
    ctx.fillRect(x, y, w > 2 ? w - 1 : w, ROW_HEIGHT - 1);
    this.record(i, x, w, tree.depth[i]);
    if (w < 28) return;
    const f = tree.frame[i];
    const name = f < 0 ? (this.labels?.rootName ?? 'all') : (this.labels?.name(f) ?? '');
    const fit = Math.floor((w - 6) / this.charWidth);
    if (fit < 2) return;
    ctx.fillStyle = '#1b1b1f';
    ctx.fillText(name.length > fit ? `${name.slice(0, fit - 1)}…` : name, x + 3, y + ROW_HEIGHT / 2);
    // The location too, dimmer, when it fits whole after the name.
    const where = f >= 0 ? (this.labels?.where(f) ?? '') : '';
    if (where && name.length + 2 + where.length <= fit) {
      ctx.fillStyle = '#5b5f66';
      ctx.fillText(where, x + 3 + (name.length + 2) * this.charWidth, y + ROW_HEIGHT / 2);
    }
  }

  private ensureRects(cap: number): void {
    if (this.rects.node.length >= cap) return;
    this.rects = { node: new Int32Array(cap), x: new Float64Array(cap), w: new Float64Array(cap), row: new Int32Array(cap), n: 0 };
  }

  private record(i: number, x: number, w: number, row: number): void {
    const r = this.rects;
    if (r.n === r.node.length) this.growRects();
    r.node[r.n] = i;
    r.x[r.n] = x;
    r.w[r.n] = w;
    r.row[r.n] = row;
    r.n++;
  }

  private growRects(): void {
    const old = this.rects;
    const cap = old.node.length * 2 || 1024;
    const r = { node: new Int32Array(cap), x: new Float64Array(cap), w: new Float64Array(cap), row: new Int32Array(cap), n: old.n };
    r.node.set(old.node);
    r.x.set(old.x);
    r.w.set(old.w);
    r.row.set(old.row);
    this.rects = r;
  }

  /** Where a node was drawn last time (CSS px relative to the canvas; row from the top of the tree), or null. */
  rectOf(node: number): { x: number; w: number; row: number } | null {
    const r = this.rects;
    for (let k = 0; k < r.n; k++) if (r.node[k] === node) return { x: r.x[k], w: r.w[k], row: r.row[k] };
    return null;
  }

  /** The node under a point in CSS px relative to the canvas, or -1. */
  hitTest(x: number, y: number): number {
    const row = Math.floor((y + this.element.scrollTop) / ROW_HEIGHT);
    const r = this.rects;
    for (let k = 0; k < r.n; k++) {
      if (r.row[k] === row && x >= r.x[k] && x < r.x[k] + r.w[k]) return r.node[k];
    }
    return -1;
  }
}
