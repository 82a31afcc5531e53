// compare.html's differential flame graph: the two runs' call trees merged by path (built on
// the Node side, src/compare/diff-tree.ts), drawn by the report's flame renderer. The width of
// a frame is its CPU time per completed request (both runs added, or one run); its colour is
// the gain (blue: less CPU per request after) or loss (red: more) of its self or total time per
// request, stronger for larger changes. Hover gives before and after per request; click zooms.

import { h, replace } from '../dom.js';
import { us } from '../format.js';
import { hookState } from '../test-hook.js';
import type { DiffHookFrame } from '../hook-state.js';
import type { DiffTree } from '../../compare-schema.js';
import { FlameCanvas, ROW_HEIGHT } from './flame-canvas.js';
import { KIND_NAMES } from './profile-model.js';
import { TreeBuilder, type ViewTree } from './tree-builder.js';
import { DIFF_NEUTRAL, DIFF_STEPS, GAIN_COLORS, LOSS_COLORS, diffColor } from './diff-colors.js';

export type WidthBy = 'both' | 'after' | 'before';
export type ColorBy = 'self' | 'total';

const signed = (x: number) => `${x >= 0 ? '+' : '−'}${us(Math.abs(x))}`;
const relative = (b: number, a: number) =>
  b > 0 ? ` (${a >= b ? '+' : '−'}${(Math.abs(a / b - 1) * 100).toFixed(0)}%)` : a > 0 ? ' (new)' : '';

export class DiffFlameSection {
  readonly element: HTMLElement;
  private readonly canvas = new FlameCanvas('Differential flame graph: CPU time per request, before and after');
  private readonly tooltip = h('div', { class: 'flame-tooltip', attrs: { role: 'tooltip' }, style: { display: 'none' } });
  private readonly totalBefore: Float64Array;
  private readonly totalAfter: Float64Array;
  private tree: ViewTree | null = null;
  private widthBy: WidthBy = 'both';
  private colorBy: ColorBy = 'self';
  private maxChange = 1;

  constructor(private readonly d: DiffTree) {
    const n = d.parent.length;
    this.totalBefore = Float64Array.from(d.selfBefore);
    this.totalAfter = Float64Array.from(d.selfAfter);
    for (let i = n - 1; i > 0; i--) {
      this.totalBefore[d.parent[i]] += this.totalBefore[i];
      this.totalAfter[d.parent[i]] += this.totalAfter[i];
    }
    const select = <T extends string>(label: string, options: [T, string][], on: (v: T) => void) => {
      const el = h('select', { attrs: { 'aria-label': label } }, ...options.map(([v, text]) => h('option', { attrs: { value: v } }, text)));
      el.addEventListener('change', () => on(el.value as T));
      return h('label', null, `${label} `, el);
    };
    const controls = h(
      'div',
      { class: 'flame-controls' },
      select<WidthBy>(
        'width',
        [
          ['both', 'CPU per request, both runs'],
          ['after', 'CPU per request, after'],
          ['before', 'CPU per request, before'],
        ],
        (v) => {
          this.widthBy = v;
          this.rebuild();
        },
      ),
      select<ColorBy>(
        'colour',
        [
          ['self', 'change of self time per request'],
          ['total', 'change of total time per request'],
        ],
        (v) => {
          this.colorBy = v;
          this.rebuild();
        },
      ),
      h(
        'span',
        { class: 'diff-legend' },
        h('span', { class: 'swatch', style: { background: GAIN_COLORS[DIFF_STEPS - 1] } }),
        ' less CPU per request after  ',
        h('span', { class: 'swatch', style: { background: LOSS_COLORS[DIFF_STEPS - 1] } }),
        ' more CPU per request after  ',
        h('span', { class: 'swatch', style: { background: DIFF_NEUTRAL } }),
        ' about the same',
      ),
    );
    this.canvas.colorOf = (node) => this.colorOf(node);
    this.canvas.onDrawn = () => this.publish();
    this.canvas.canvas.addEventListener('mousemove', (e) => this.hover(e));
    this.canvas.canvas.addEventListener('mouseleave', () => this.hide());
    this.canvas.canvas.addEventListener('click', (e) => {
      const node = this.nodeAt(e);
      if (node < 0 || !this.tree) return;
      this.canvas.setZoom(node === this.canvas.zoom ? Math.max(0, this.tree.parent[node]) : node);
      this.canvas.draw();
    });
    this.element = h(
      'section',
      { id: 'diff-flame', class: 'section' },
      h('h2', null, 'Differential flame graph'),
      h(
        'p',
        { class: 'muted' },
        "Both runs' CPU profiles (the busiest serving thread over the load window) merged by call path, per completed request. Hover a frame for its time per request before and after; click to zoom.",
      ),
      controls,
      this.canvas.element,
      this.tooltip,
    );
  }

  private changeOf(node: number): number {
    const i = this.diffNode(node);
    return this.colorBy === 'self' ? this.d.selfAfter[i] - this.d.selfBefore[i] : this.totalAfter[i] - this.totalBefore[i];
  }

  /** The diff-tree node a view node shows (view frames are diff-tree node indexes; -1 is the root). */
  private diffNode(node: number): number {
    const f = this.tree ? this.tree.frame[node] : -1;
    return f < 0 ? 0 : f;
  }

  private colorOf(node: number): string {
    return diffColor(this.changeOf(node), this.maxChange);
  }

  /** Builds the view tree for the chosen width and colour and draws it. */
  rebuild(): void {
    const d = this.d;
    const n = d.parent.length;
    const b = new TreeBuilder(-1, n, n + 1);
    const disp = new Int32Array(n);
    const w = (i: number) =>
      this.widthBy === 'after' ? d.selfAfter[i] : this.widthBy === 'before' ? d.selfBefore[i] : d.selfBefore[i] + d.selfAfter[i];
    for (let i = 1; i < n; i++) disp[i] = b.append(disp[d.parent[i]], i);
    for (let i = 0; i < n; i++) if (w(i) > 0) b.addSelf(disp[i], w(i));
    this.tree = b.finish();
    let max = 0;
    for (let k = 1; k < this.tree.n; k++) max = Math.max(max, Math.abs(this.changeOf(k)));
    this.maxChange = max || 1;
    this.canvas.setTree(this.tree, {
      name: (f) => d.frames.name[d.frame[f]] ?? '',
      where: (f) => d.frames.file[d.frame[f]] ?? '',
      kind: (f) => d.frames.kind[d.frame[f]] ?? 0,
      rootName: 'all',
    });
    this.canvas.draw();
  }

  private nodeAt(e: MouseEvent): number {
    const r = this.canvas.canvas.getBoundingClientRect();
    return this.canvas.hitTest(e.clientX - r.left, e.clientY - r.top);
  }

  private hover(e: MouseEvent): void {
    const node = this.nodeAt(e);
    if (node < 0) {
      this.hide();
      return;
    }
    const i = this.diffNode(node);
    const d = this.d;
    const f = d.frame[i];
    const lines = [
      h('div', { class: 'tt-name' }, f < 0 ? 'all' : d.frames.name[f]),
      f >= 0 ? h('div', { class: 'tt-file' }, d.frames.file[f] || '(no source location)') : null,
      f >= 0 ? h('div', { class: 'tt-kind' }, `layer: ${KIND_NAMES[d.frames.kind[f]] ?? '?'}`) : null,
      h(
        'div',
        null,
        `self per request: before ${us(d.selfBefore[i])}, after ${us(d.selfAfter[i])}, ${signed(d.selfAfter[i] - d.selfBefore[i])}${relative(d.selfBefore[i], d.selfAfter[i])}`,
      ),
      h(
        'div',
        null,
        `total per request: before ${us(this.totalBefore[i])}, after ${us(this.totalAfter[i])}, ${signed(this.totalAfter[i] - this.totalBefore[i])}${relative(this.totalBefore[i], this.totalAfter[i])}`,
      ),
    ];
    replace(this.tooltip, ...lines);
    this.tooltip.style.display = 'block';
    const pad = 14;
    const r = this.tooltip.getBoundingClientRect();
    const x = e.clientX + pad + r.width > window.innerWidth ? e.clientX - pad - r.width : e.clientX + pad;
    const y = e.clientY + pad + r.height > window.innerHeight ? e.clientY - pad - r.height : e.clientY + pad;
    this.tooltip.style.left = `${Math.max(0, x)}px`;
    this.tooltip.style.top = `${Math.max(0, y)}px`;
    this.publish();
  }

  private hide(): void {
    this.tooltip.style.display = 'none';
    this.publish();
  }

  /** The test hook's view of what is drawn. */
  private publish(): void {
    const tree = this.tree;
    if (!tree) return;
    const d = this.d;
    const frames: DiffHookFrame[] = [];
    for (let k = 0; k < tree.n; k++) {
      const rect = this.canvas.rectOf(k);
      if (!rect) continue;
      const i = this.diffNode(k);
      const f = d.frame[i];
      frames.push({
        name: f < 0 ? 'all' : d.frames.name[f],
        file: f < 0 ? '' : d.frames.file[f],
        x: rect.x,
        y: rect.row * ROW_HEIGHT - this.canvas.element.scrollTop + ROW_HEIGHT / 2,
        w: rect.w,
        color: this.colorOf(k),
        selfBeforeUs: d.selfBefore[i],
        selfAfterUs: d.selfAfter[i],
        totalBeforeUs: this.totalBefore[i],
        totalAfterUs: this.totalAfter[i],
      });
    }
    frames.sort((a, b) => b.w - a.w);
    hookState().diff = {
      widthBy: this.widthBy,
      colorBy: this.colorBy,
      treeNodes: tree.n,
      visibleFrames: this.canvas.stats.visibleFrames,
      frames: frames.slice(0, 300),
      tooltip: this.tooltip.style.display === 'block' ? this.tooltip.innerText : null,
    };
  }
}
