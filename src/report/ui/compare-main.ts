// compare.html's entry point (bundled at package build into dist/report-ui/compare.js and
// inlined into every compare.html): the comparison's tables and the differential flame graph.

import './report.css';
import { h, replace, section, table } from './dom.js';
import { decodeData } from './decode-payload.js';
import { hookState, installHook } from './test-hook.js';
import { us } from './format.js';
import { DiffFlameSection } from './flame/diff-flame.js';
import { COMPARE_PAYLOAD_VERSION, type ComparePayload } from '../html/compare-payload.js';
import type { MetricChange } from '../compare-schema.js';

installHook();
window.addEventListener('error', (e) => hookState().errors.push(String(e.message)));
window.addEventListener('unhandledrejection', (e) => hookState().errors.push(String(e.reason)));

const num = (x: number, unit: string) =>
  unit === 'share'
    ? `${(x * 100).toFixed(1)}%`
    : unit === 'bytes'
      ? `${(x / 1048576).toFixed(1)} MB`
      : unit === 'µs'
        ? us(x)
        : `${x.toFixed(x >= 100 ? 0 : 2)} ${unit}`;
const change = (m: MetricChange) => (m.change === undefined ? '–' : `${m.change >= 0 ? '+' : ''}${(m.change * 100).toFixed(1)}%`);
const interval = (m: MetricChange) => (m.interval ? `${(m.interval.low * 100).toFixed(1)}% … ${(m.interval.high * 100).toFixed(1)}%` : '–');

function metricRows(ms: MetricChange[]) {
  return ms.map((m) => [m.name, num(m.before, m.unit), num(m.after, m.unit), change(m), interval(m), m.verdict ?? '']);
}

async function boot(): Promise<void> {
  const root = document.getElementById('app') ?? document.body;
  const p = (await decodeData(document)) as ComparePayload;
  if (p.version !== COMPARE_PAYLOAD_VERSION || p.kind !== 'compare')
    throw new Error(`compare data version ${String(p.version)} is not ${COMPARE_PAYLOAD_VERSION}`);
  const c = p.comparison;
  const sections: string[] = ['load'];
  const side = (label: string, s: typeof c.before) =>
    h(
      'div',
      null,
      h('b', null, `${label}: `),
      h('code', null, s.command.join(' ') || s.runDir),
      h('span', { class: 'muted' }, ` · ${s.requests} requests in ${(s.durationMs / 1000).toFixed(1)} s · `),
      h('code', null, s.runDir),
    );
  const notes = [...c.mismatches.map((m) => `differs: ${m}`), ...c.missing.map((m) => `missing: ${m}`)];
  const header = h(
    'header',
    { class: 'page-header' },
    h('div', { class: 'brand' }, 'hotpath compare'),
    side('before', c.before),
    side('after', c.after),
    notes.length ? h('ul', { class: 'warn' }, ...notes.map((n) => h('li', null, n))) : null,
  );
  const head = ['', 'before', 'after', 'change', '95% interval', 'verdict'];
  const load = section(
    'load',
    'Load',
    table(head, metricRows(c.load)),
    h('p', { class: 'muted' }, `A change is real when its whole 95% interval lies beyond ±${(c.minEffect * 100).toFixed(0)}%.`),
  );
  const fns = c.functions
    ? section(
        'functions',
        'CPU per request by function',
        table(
          ['function', 'file', 'layer', 'self before', 'self after', 'change', 'status'],
          c.functions
            .slice(0, 20)
            .map((f) => [
              f.function,
              f.file,
              f.kind,
              us(f.selfBeforeUs),
              us(f.selfAfterUs),
              `${f.selfChangeUs >= 0 ? '+' : '−'}${us(Math.abs(f.selfChangeUs))}`,
              f.status,
            ]),
        ),
      )
    : null;
  if (fns) sections.push('functions');
  const findingList = (title: string, fs: typeof c.findings.new) =>
    fs.length === 0
      ? null
      : h(
          'div',
          null,
          h('h4', null, title),
          h(
            'ul',
            null,
            ...fs.map((f) =>
              h(
                'li',
                null,
                h('code', null, f.code),
                ` ${f.title}`,
                f.culprit ? ` (${f.culprit.function}, ${f.culprit.file}:${f.culprit.line})` : '',
              ),
            ),
          ),
        );
  const findings = section(
    'findings',
    'Findings',
    findingList('Resolved', c.findings.resolved),
    findingList('New', c.findings.new),
    findingList('Still present', c.findings.stillPresent),
    c.findings.resolved.length + c.findings.new.length + c.findings.stillPresent.length === 0
      ? h('p', { class: 'muted' }, 'No finding in either run.')
      : null,
  );
  sections.push('findings');
  const telemetry = c.telemetry.length ? section('telemetry', 'Telemetry', table(head, metricRows(c.telemetry))) : null;
  if (telemetry) sections.push('telemetry');
  const diff = p.diff ? new DiffFlameSection(p.diff) : null;
  if (diff) sections.push('diff-flame');
  replace(
    root,
    header,
    h(
      'main',
      null,
      diff?.element ??
        section(
          'diff-flame',
          'Differential flame graph',
          h('p', { class: 'muted' }, 'Not drawn: a run has no CPU profile (see missing above).'),
        ),
      load,
      fns,
      findings,
      telemetry,
    ),
    h('footer', { class: 'muted' }, `hotpath ${p.hotpathVersion}`),
  );
  diff?.rebuild();
  const s = hookState();
  s.sections = sections;
  s.readyMs = performance.now();
  s.ready = true;
}

boot().catch((err: unknown) => {
  hookState().errors.push(String(err));
  const root = document.getElementById('app') ?? document.body;
  replace(root, h('pre', { class: 'fatal' }, `This comparison could not be displayed: ${String(err)}`));
});
