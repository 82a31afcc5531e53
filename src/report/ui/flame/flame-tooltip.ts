// The hover tooltip of a flame graph: function, file:line, layer, total and self time with
// their shares. Text only.

import { h, replace } from '../dom.js';
import { pct, weight } from '../format.js';
import type { ViewTree } from './tree-builder.js';
import type { ProfileModel } from './profile-model.js';
import { KIND_NAMES } from './profile-model.js';

export class FlameTooltip {
  readonly element = h('div', { class: 'flame-tooltip', attrs: { role: 'tooltip' } });

  show(model: ProfileModel, tree: ViewTree, node: number, rootName: string, clientX: number, clientY: number): void {
    const f = tree.frame[node];
    const whole = tree.total[0] || 1;
    const lines = [
      h('div', { class: 'tt-name' }, f < 0 ? rootName : model.frameName[f]),
      f >= 0 ? h('div', { class: 'tt-file' }, location(model, f)) : null,
      f >= 0 ? h('div', { class: 'tt-kind' }, `layer: ${KIND_NAMES[model.frameKind[f]] ?? '?'}`) : null,
      h('div', null, `total: ${weight(tree.total[node], model.unit)} (${pct(tree.total[node] / whole)})`),
      h('div', null, `self: ${weight(tree.self[node], model.unit)} (${pct(tree.self[node] / whole)})`),
    ];
    replace(this.element, ...lines);
    this.element.style.display = 'block';
    const pad = 14;
    const r = this.element.getBoundingClientRect();
    const x = clientX + pad + r.width > window.innerWidth ? clientX - pad - r.width : clientX + pad;
    const y = clientY + pad + r.height > window.innerHeight ? clientY - pad - r.height : clientY + pad;
    this.element.style.left = `${Math.max(0, x)}px`;
    this.element.style.top = `${Math.max(0, y)}px`;
  }

  hide(): void {
    this.element.style.display = 'none';
  }
}

/** file:line of a frame, or a note for frames without a source location. */
export function location(model: ProfileModel, f: number): string {
  const file = model.frameFile[f];
  if (!file) return '(no source location)';
  const line = model.frameLine[f];
  return line > 0 ? `${file}:${line}` : file;
}
