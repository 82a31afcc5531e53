// The flame graph section: profile selector (one per process/thread, CPU and allocations),
// flame / inverted / callers-and-callees views, layer toggles, search with the matched
// share, the time window chosen on the timeline, and the selected frame's details.

import { h, replace, section } from '../dom.js';
import { pct } from '../format.js';
import { focusRequest, timeWindow, type TimeWindow } from '../app-state.js';
import { hookState } from '../test-hook.js';
import type { PayloadProfile } from '../../html/report-payload.js';
import { decodeProfile, KIND_NAMES, selfWeights, type ProfileModel } from './profile-model.js';
import { buildViewTree, REMOVED_WHEN_HIDDEN, type ViewMode } from './view-tree.js';
import type { ViewTree } from './tree-builder.js';
import { compileQuery, matchedShare, matchFrames } from './flame-search.js';
import { FlamePane } from './flame-pane.js';
import { FlameTooltip } from './flame-tooltip.js';
import { kindColor } from './flame-colors.js';
import { describedNode, frameDetails, statusLine, topFunctionsTable } from './flame-details.js';
import { readUrlState, writeUrlState, type UrlState } from '../url-state.js';

const DEFAULT_HIDDEN = new Set([6]); // idle: a server waiting for requests is not a hotspot

interface State {
  profile: number;
  mode: ViewMode;
  hidden: Set<number>;
  focusFrame: number;
  query: string;
  selectedFrame: number;
}

export class FlameSection {
  readonly element: HTMLElement;
  private readonly models: (ProfileModel | null)[];
  private readonly state: State = {
    profile: 0,
    mode: 'flame',
    hidden: new Set(DEFAULT_HIDDEN),
    focusFrame: -1,
    query: '',
    selectedFrame: -1,
  };
  private readonly tooltip = new FlameTooltip();
  private readonly main: FlamePane;
  private readonly second: FlamePane;
  private readonly status = h('div', { class: 'flame-status' });
  private readonly details = h('div', { class: 'flame-details' });
  private readonly share = h('output', { class: 'search-share' });
  private readonly top = h('div', { class: 'top-functions' });
  private readonly modeButtons = new Map<ViewMode, HTMLButtonElement>();
  private match: Uint8Array | null = null;
  private builds = 0;

  constructor(private readonly profiles: PayloadProfile[]) {
    this.models = profiles.map(() => null);
    this.restore(readUrlState());
    const events = { onSelect: (pane: FlamePane, node: number) => this.select(pane, node) };
    this.main = new FlamePane('Flame graph', this.tooltip, events);
    this.second = new FlamePane('Callees', this.tooltip, events);
    this.element = section(
      'flame',
      'Flame graph',
      this.toolbar(),
      this.layerBar(),
      this.status,
      this.details,
      h('div', { class: 'flame-panes' }, this.main.element, this.second.element),
      this.top,
      this.tooltip.element,
    );
    this.tooltip.hide();
    this.main.canvas.onDrawn = () => this.publish();
    timeWindow.subscribe(() => this.rebuild(true));
    document.addEventListener('keydown', (e) => {
      if (e.key !== 'Escape' || (e.target instanceof HTMLInputElement && e.target.type !== 'checkbox')) return;
      this.main.zoomTo(0);
      this.second.zoomTo(0);
      this.publish();
    });
    focusRequest.subscribe((r) => {
      if (r) this.focusByLocation(r);
    });
  }

  /** Applies a view read from the URL (unknown names are ignored). */
  private restore(u: UrlState): void {
    if (u.profile !== undefined && u.profile < this.profiles.length) this.state.profile = u.profile;
    if (u.mode === 'flame' || u.mode === 'inverted' || u.mode === 'callers') this.state.mode = u.mode;
    if (u.hidden) this.state.hidden = new Set(u.hidden.map((k) => KIND_NAMES.indexOf(k as never)).filter((k) => k >= 0));
    if (u.query) this.state.query = u.query;
    if (u.focus && this.profiles.length) this.state.focusFrame = this.model.frameName.indexOf(u.focus);
    if (this.state.mode === 'callers' && this.state.focusFrame < 0) this.state.mode = 'flame';
  }

  private save(): void {
    const m = this.model;
    const focus = this.state.mode === 'callers' && this.state.focusFrame >= 0 ? m.frameName[this.state.focusFrame] : undefined;
    writeUrlState({
      profile: this.state.profile,
      mode: this.state.mode,
      hidden: [...this.state.hidden].map((k) => KIND_NAMES[k]),
      query: this.state.query,
      ...(timeWindow.value && m.kind === 'cpu' ? { window: timeWindow.value } : {}),
      ...(focus ? { focus } : {}),
    });
  }

  private get model(): ProfileModel {
    const i = this.state.profile;
    this.models[i] ??= decodeProfile(this.profiles[i]);
    return this.models[i];
  }

  private toolbar(): HTMLElement {
    const select = h(
      'select',
      { attrs: { 'aria-label': 'Profile' }, on: { change: () => this.pickProfile(Number(select.value)) } },
      ...this.profiles.map((p, i) => {
        const o = h('option', null, p.label);
        o.value = String(i);
        o.selected = i === this.state.profile;
        return o;
      }),
    );
    if (this.profiles.length < 2) select.disabled = true;
    const modes: [ViewMode, string][] = [
      ['flame', 'Flame'],
      ['inverted', 'Inverted (bottom-up)'],
      ['callers', 'Callers & callees'],
    ];
    const buttons = modes.map(([mode, label]) => {
      const b = h('button', { class: 'mode', data: { mode }, on: { click: () => this.setMode(mode) } }, label);
      this.modeButtons.set(mode, b);
      return b;
    });
    let timer = 0;
    const search = h('input', {
      class: 'flame-search',
      attrs: { type: 'search', placeholder: 'Search functions or files (/regex/)', 'aria-label': 'Search' },
    });
    search.value = this.state.query;
    search.addEventListener('input', () => {
      clearTimeout(timer);
      timer = window.setTimeout(() => {
        this.state.query = search.value;
        this.applySearch();
        this.paint();
        this.save();
      }, 120);
    });
    const reset = h(
      'button',
      {
        on: {
          click: () => {
            this.main.zoomTo(0);
            this.second.zoomTo(0);
            this.publish();
          },
        },
      },
      'Reset zoom',
    );
    return h('div', { class: 'flame-toolbar' }, select, h('span', { class: 'modes' }, ...buttons), reset, search, this.share);
  }

  private layerBar(): HTMLElement {
    const boxes = KIND_NAMES.map((name, k) => {
      const box = h('input', { attrs: { type: 'checkbox', 'aria-label': `show ${name}` }, data: { layer: name } });
      box.checked = !this.state.hidden.has(k);
      box.addEventListener('change', () => {
        if (box.checked) this.state.hidden.delete(k);
        else this.state.hidden.add(k);
        this.rebuild(true);
      });
      return h(
        'label',
        {
          class: 'layer',
          title: REMOVED_WHEN_HIDDEN.has(k) ? 'hiding removes this time' : 'hiding merges these frames into their callers',
        },
        box,
        h('span', { class: 'swatch', style: { background: kindColor(k) } }),
        name,
      );
    });
    return h(
      'div',
      { class: 'flame-layers' },
      h('span', { class: 'muted' }, 'Layers:'),
      ...boxes,
      h(
        'span',
        { class: 'muted note' },
        'Colour: the layer; a deeper shade means more self time. Hidden app, deps, node-core, v8-builtin, native, agent and kernel frames are merged into their callers; hidden gc, idle and program time is removed.',
      ),
    );
  }

  private pickProfile(i: number): void {
    this.state.profile = i;
    this.state.focusFrame = -1;
    this.state.selectedFrame = -1;
    if (this.state.mode === 'callers') this.state.mode = 'flame';
    this.rebuild(false);
  }

  private setMode(mode: ViewMode): void {
    if (mode === 'callers' && this.state.focusFrame < 0) {
      this.state.focusFrame = this.state.selectedFrame >= 0 ? this.state.selectedFrame : this.hottestFrame();
    }
    this.state.mode = mode;
    this.rebuild(false);
  }

  /** Builds the view trees for the current state and draws them. */
  rebuild(keepZoom: boolean): void {
    const t0 = performance.now();
    const m = this.model;
    const win = m.kind === 'cpu' ? timeWindow.value : null;
    const self = selfWeights(m, win);
    const paths = keepZoom ? [this.main.zoomPath(), this.second.zoomPath()] : [[], []];
    const focus = this.state.focusFrame;
    const focused = this.state.mode === 'callers' && focus >= 0;
    const opts = { hidden: this.state.hidden, focusFrame: focus };
    const mainTree = buildViewTree(m, self, { ...opts, mode: focused ? 'callers' : this.state.mode });
    this.main.show(m, mainTree, focused ? m.frameName[focus] : 'all');
    this.main.setTitle(
      focused
        ? `Callers of ${m.frameName[focus]} (who calls it, bottom-up)`
        : this.state.mode === 'inverted'
          ? 'Inverted: where time was spent, and who called it'
          : 'Flame graph: callers above callees, width = time',
    );
    this.second.element.style.display = focused ? '' : 'none';
    if (focused) {
      this.second.show(m, buildViewTree(m, self, { ...opts, mode: 'callees' }), m.frameName[focus]);
      this.second.setTitle(`Callees of ${m.frameName[focus]} (what it calls)`);
    }
    this.main.restoreZoom(paths[0]);
    this.second.restoreZoom(paths[1]);
    this.builds++;
    hookState().flame = { ...this.hookBase(), lastBuildMs: performance.now() - t0 };
    for (const [mode, b] of this.modeButtons) b.classList.toggle('active', mode === (focused ? 'callers' : this.state.mode));
    this.applySearch();
    this.paint();
    this.describeSelection();
    this.renderTop();
    this.save();
  }

  private renderTop(): void {
    const tree = this.main.tree;
    replace(this.top, ...(tree && this.state.mode !== 'callers' ? topFunctionsTable(this.model, tree, (f) => this.focusOn(f)) : []));
  }

  private describeSelection(): void {
    const tree = this.main.tree;
    if (!tree) return;
    const node = describedNode(this.model, tree, this.state.selectedFrame);
    if (node >= 0) this.renderDetails(tree, node, this.state.selectedFrame < 0 ? 'Hottest: ' : '');
    else replace(this.details);
  }

  private focusOn(frame: number): void {
    this.state.focusFrame = frame;
    this.state.selectedFrame = frame;
    this.setMode('callers');
  }

  private applySearch(): void {
    const test = compileQuery(this.state.query);
    const m = this.model;
    this.match = test ? matchFrames(m.frameName, m.frameFile, test) : null;
    this.main.canvas.setSearch(this.match);
    this.second.canvas.setSearch(this.match);
    if (test === undefined) replace(this.share, 'invalid regular expression');
    else if (!this.match || !this.main.tree) replace(this.share);
    else
      replace(this.share, `matched: ${pct(matchedShare(this.main.tree, this.match))} of shown ${m.unit === 'us' ? 'time' : 'allocations'}`);
  }

  /** Draws the panes and refreshes the status line and the test hook. */
  paint(): void {
    this.main.canvas.draw();
    if (this.second.element.style.display !== 'none') this.second.canvas.draw();
    this.renderStatus();
    this.publish();
  }

  private renderStatus(): void {
    replace(this.status, ...statusLine(this.model, this.main.tree, timeWindow.value, () => timeWindow.set(null)));
  }

  private select(pane: FlamePane, node: number): void {
    const tree = pane.tree;
    if (!tree) return;
    const f = tree.frame[node];
    this.state.selectedFrame = f;
    this.renderDetails(tree, node);
    this.publish();
  }

  private renderDetails(tree: ViewTree, node: number, prefix = ''): void {
    replace(
      this.details,
      ...frameDetails(this.model, tree, node, prefix, (f) => {
        this.state.focusFrame = f;
        this.setMode('callers');
      }),
    );
  }

  private hottestFrame(): number {
    const m = this.model;
    const self = selfWeights(m, null);
    const byFrame = new Float64Array(m.frameCount);
    for (let i = 0; i < m.nodeCount; i++) byFrame[m.nodeFrame[i]] += self[i];
    let best = 0;
    for (let f = 0; f < m.frameCount; f++) if (m.frameKind[f] !== 6 && byFrame[f] > byFrame[best]) best = f;
    return best;
  }

  /** Focuses the callers & callees view on a function named in the diagnosis. */
  private focusByLocation(r: { name: string; file: string; line: number }): void {
    const cpu = this.profiles.findIndex((p) => p.kind === 'cpu');
    if (cpu >= 0 && this.profiles[this.state.profile].kind !== 'cpu') this.state.profile = cpu;
    const m = this.model;
    let found = -1;
    for (let f = 0; f < m.frameCount && found < 0; f++) {
      if (m.frameName[f] === r.name && (r.file === '' || m.frameFile[f] === r.file) && (r.line === 0 || m.frameLine[f] === r.line))
        found = f;
    }
    if (found < 0) return;
    this.state.focusFrame = found;
    this.state.selectedFrame = found;
    this.setMode('callers');
    this.element.scrollIntoView({ behavior: 'smooth' });
  }

  private hookBase() {
    const m = this.model;
    const tree = this.main.tree;
    const f = this.state.focusFrame;
    const z = tree ? tree.frame[this.main.canvas.zoom] : -1;
    return {
      profile: m.id,
      mode: this.state.mode,
      hiddenLayers: [...this.state.hidden].map((k) => KIND_NAMES[k]),
      visibleFrames: this.main.canvas.stats.visibleFrames,
      treeNodes: tree?.n ?? 0,
      totalShown: tree ? tree.total[0] : 0,
      searchShare: this.match && tree ? matchedShare(tree, this.match) : null,
      window: m.kind === 'cpu' ? timeWindow.value : null,
      zoomedFrame: z >= 0 ? m.frameName[z] : null,
      focusFrame: this.state.mode === 'callers' && f >= 0 ? m.frameName[f] : null,
      lastBuildMs: hookState().flame?.lastBuildMs ?? 0,
      lastDrawMs: this.main.canvas.stats.drawMs,
      builds: this.builds,
    };
  }

  private publish(): void {
    hookState().flame = this.hookBase();
  }
}

export type { TimeWindow };
