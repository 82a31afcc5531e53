// The report page's entry point (bundled at package build into dist/report-ui/report.js and
// inlined into every report.html): decodes the embedded run data and builds the sections.

import 'uplot/dist/uPlot.min.css';
import './report.css';
import { h, replace } from './dom.js';
import { decodePayload } from './decode-payload.js';
import { hookState, installHook } from './test-hook.js';
import { runHeader } from './run-header.js';
import { diagnosisSection } from './diagnosis-section.js';
import { TimelineSection } from './timeline-section.js';
import { loadSection } from './load-section.js';
import { FlameSection } from './flame/flame-section.js';
import { readUrlState } from './url-state.js';
import { timeWindow } from './app-state.js';

installHook();
window.addEventListener('error', (e) => hookState().errors.push(String(e.message)));
window.addEventListener('unhandledrejection', (e) => hookState().errors.push(String(e.reason)));

async function boot(): Promise<void> {
  const root = document.getElementById('app') ?? document.body;
  const p = await decodePayload(document);
  const fromUrl = readUrlState();
  if (fromUrl.window) timeWindow.set(fromUrl.window);
  const sections: [string, string][] = [
    ['diagnosis', 'Diagnosis'],
    ['timeline', 'Timeline'],
    ['load', 'Load'],
  ];
  if (p.profiles.length) sections.push(['flame', 'Flame graph']);
  const timeline = new TimelineSection(p);
  const load = loadSection(p.load);
  const flame = p.profiles.length ? new FlameSection(p.profiles) : null;
  replace(
    root,
    runHeader(p, sections),
    h('main', null, diagnosisSection(p), timeline.element, load.element, flame?.element ?? null),
    h('footer', { class: 'muted' }, `hotpath ${p.hotpathVersion} · run directory `, h('code', null, p.run.dir)),
  );
  timeline.render();
  load.render();
  flame?.rebuild(false);
  const s = hookState();
  s.sections = sections.map(([id]) => id);
  // performance.now() counts from navigation start: this is the time until the page is usable.
  s.readyMs = performance.now();
  s.ready = true;
}

boot().catch((err: unknown) => {
  hookState().errors.push(String(err));
  const root = document.getElementById('app') ?? document.body;
  replace(root, h('pre', { class: 'fatal' }, `This report could not be displayed: ${String(err)}`));
});
