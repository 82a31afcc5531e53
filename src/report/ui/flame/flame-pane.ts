// One flame graph pane: a canvas, its view tree, and mouse handling (hover tooltip, click
// to zoom, click the zoomed frame again to zoom out). Several panes share one tooltip.

import { h } from '../dom.js';
import { FlameCanvas } from './flame-canvas.js';
import type { FlameTooltip } from './flame-tooltip.js';
import type { ProfileModel } from './profile-model.js';
import type { ViewTree } from './tree-builder.js';

export interface PaneEvents {
  /** A frame was clicked (after the pane zoomed to it). */
  onSelect(pane: FlamePane, node: number): void;
}

export class FlamePane {
  readonly element: HTMLElement;
  readonly canvas: FlameCanvas;
  tree: ViewTree | null = null;
  private model: ProfileModel | null = null;
  private rootName = 'all';

  constructor(
    title: string,
    private readonly tooltip: FlameTooltip,
    private readonly events: PaneEvents,
  ) {
    this.canvas = new FlameCanvas(title);
    this.element = h('div', { class: 'flame-pane' }, h('div', { class: 'pane-title' }, title), this.canvas.element);
    const c = this.canvas.canvas;
    c.addEventListener('mousemove', (e) => this.hover(e));
    c.addEventListener('mouseleave', () => this.tooltip.hide());
    c.addEventListener('click', (e) => this.click(e));
  }

  setTitle(title: string): void {
    const t = this.element.firstChild;
    if (t) t.textContent = title;
  }

  show(model: ProfileModel, tree: ViewTree, rootName: string): void {
    this.model = model;
    this.tree = tree;
    this.rootName = rootName;
    this.canvas.setTree(tree, {
      name: (f) => model.frameName[f],
      where: (f) =>
        model.frameFile[f] ? (model.frameLine[f] > 0 ? `${model.frameFile[f]}:${model.frameLine[f]}` : model.frameFile[f]) : '',
      kind: (f) => model.frameKind[f],
      rootName,
    });
  }

  private point(e: MouseEvent): number {
    const r = this.canvas.canvas.getBoundingClientRect();
    return this.canvas.hitTest(e.clientX - r.left, e.clientY - r.top);
  }

  private hover(e: MouseEvent): void {
    const node = this.point(e);
    if (node < 0 || !this.model || !this.tree) {
      this.tooltip.hide();
      return;
    }
    this.tooltip.show(this.model, this.tree, node, this.rootName, e.clientX, e.clientY);
  }

  private click(e: MouseEvent): void {
    const node = this.point(e);
    if (node < 0 || !this.tree) return;
    const target = node === this.canvas.zoom && node !== 0 ? this.tree.parent[node] : node;
    this.zoomTo(target);
    this.events.onSelect(this, node);
  }

  zoomTo(node: number): void {
    this.canvas.setZoom(node);
    this.canvas.draw();
  }

  /** Frames from the root to the zoomed node, to restore the zoom after a rebuild. */
  zoomPath(): number[] {
    const t = this.tree;
    const path: number[] = [];
    if (!t) return path;
    for (let i = this.canvas.zoom; i > 0; i = t.parent[i]) path.unshift(t.frame[i]);
    return path;
  }

  /** Zooms to the deepest node that still follows `path` in the current tree. */
  restoreZoom(path: number[]): void {
    const t = this.tree;
    if (!t) return;
    let node = 0;
    for (const frame of path) {
      const next = childWithFrame(t, node, frame);
      if (next < 0) break;
      node = next;
    }
    this.canvas.setZoom(node);
  }
}

function childWithFrame(t: ViewTree, node: number, frame: number): number {
  const end = node + t.size[node];
  for (let j = node + 1; j < end; j += t.size[j]) if (t.frame[j] === frame) return j;
  return -1;
}
