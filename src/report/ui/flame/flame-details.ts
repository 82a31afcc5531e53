// The text around a flame graph: the status line (time window, weight shown, notes), the
// selected (or hottest) frame's details, and the table of the functions with the most self
// time in the current view. Text only; `onFocus` opens a function's callers & callees.

import { h, table, type Child } from '../dom.js';
import { pct, weight } from '../format.js';
import type { TimeWindow } from '../app-state.js';
import { KIND_NAMES, sampleSpan, type ProfileModel } from './profile-model.js';
import type { ViewTree } from './tree-builder.js';
import { location } from './flame-tooltip.js';
import { topFunctions } from './top-functions.js';

/** Rows in the table of functions with the most self time. */
export const TOP_FUNCTIONS = 12;

export type OnFocus = (frame: number) => void;

export function statusLine(m: ProfileModel, tree: ViewTree | null, win: TimeWindow | null, clearWindow: () => void): Child[] {
  const span = sampleSpan(m);
  const parts = [
    m.kind === 'heap'
      ? 'Allocation profile (sampled bytes, not time-resolved)'
      : win
        ? `Window ${win.from.toFixed(2)}–${win.to.toFixed(2)} s (drag on the timeline to change)`
        : span
          ? `All samples, ${span.from.toFixed(1)}–${span.to.toFixed(1)} s (drag on the timeline to pick a window)`
          : 'No samples',
    tree ? `shown: ${weight(tree.total[0], m.unit)}` : '',
    ...m.notes,
  ].filter(Boolean);
  const clear = win && m.kind === 'cpu' ? h('button', { on: { click: clearWindow } }, 'Clear window') : null;
  return [parts.join(' · '), clear ? ' ' : '', clear];
}

/** The node of the selected frame with the most self time, or the hottest node (app code preferred). */
export function describedNode(m: ProfileModel, tree: ViewTree, selectedFrame: number): number {
  let best = -1;
  let bestScore = 0;
  for (let i = 1; i < tree.n; i++) {
    const f = tree.frame[i];
    if (selectedFrame >= 0 && f !== selectedFrame) continue;
    const score = tree.self[i] * (m.frameKind[f] === 0 ? 4 : 1);
    if (score > bestScore) {
      best = i;
      bestScore = score;
    }
  }
  return best;
}

export function frameDetails(m: ProfileModel, tree: ViewTree, node: number, prefix: string, onFocus: OnFocus): Child[] {
  const f = tree.frame[node];
  if (f < 0) return [];
  const whole = tree.total[0] || 1;
  return [
    prefix,
    h('strong', null, m.frameName[f]),
    ' ',
    h('code', null, location(m, f)),
    ` · ${KIND_NAMES[m.frameKind[f]]} · total ${weight(tree.total[node], m.unit)} (${pct(tree.total[node] / whole)})`,
    ` · self ${weight(tree.self[node], m.unit)} (${pct(tree.self[node] / whole)}) `,
    h('button', { on: { click: () => onFocus(f) } }, 'Show callers & callees'),
  ];
}

/** The functions with the most self time in what is shown (window, layers), each a link to its callers & callees. */
export function topFunctionsTable(m: ProfileModel, tree: ViewTree, onFocus: OnFocus): Child[] {
  const whole = tree.total[0] || 1;
  const rows = topFunctions(tree, m.frameCount, TOP_FUNCTIONS).map((t) => [
    h('button', { class: 'link', on: { click: () => onFocus(t.frame) } }, m.frameName[t.frame]),
    h('code', null, location(m, t.frame)),
    KIND_NAMES[m.frameKind[t.frame]],
    `${weight(t.self, m.unit)} (${pct(t.self / whole)})`,
    `${weight(t.total, m.unit)} (${pct(t.total / whole)})`,
  ]);
  const what = m.unit === 'us' ? 'self time' : 'bytes allocated';
  return [h('h3', null, `Most ${what} in this view`), table(['function', 'location', 'layer', 'self', 'total'], rows)];
}
