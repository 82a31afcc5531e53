// The diagnosis: each finding with its severity, summary, the measured evidence, the
// culprit's file:line with a source excerpt, and the fix (safe Markdown). Then the top
// hotspots, each a link into the flame graph's callers & callees view.

import { h, section, table, type Child } from './dom.js';
import { bytes, evidenceValue, ms, num, pct } from './format.js';
import { renderMarkdown } from './markdown.js';
import { sourceExcerpt } from './source-excerpt.js';
import { focusRequest } from './app-state.js';
import type { PayloadFinding, ReportPayload } from '../html/report-payload.js';

/** Functions present in the CPU profiles, as "name file line" keys: only those get a flame graph link. */
type Profiled = (name: string, file: string, line: number) => boolean;

function profiledFunctions(p: ReportPayload): Profiled {
  const keys = new Set<string>();
  for (const prof of p.profiles) {
    if (prof.kind !== 'cpu') continue;
    const f = prof.frames;
    for (let i = 0; i < f.name.length; i++) keys.add(`${prof.strings[f.name[i]]}\0${prof.strings[f.file[i]]}\0${f.line[i]}`);
  }
  return (name, file, line) => keys.has(`${name}\0${file}\0${line}`);
}

export function diagnosisSection(p: ReportPayload): HTMLElement {
  const profiled = profiledFunctions(p);
  const findings = p.findings.length
    ? p.findings.map((f) => findingCard(f, profiled))
    : [
        h(
          'p',
          { class: 'muted' },
          p.load?.requests.total === 0
            ? 'No findings: no request got a response, so this run measured nothing.'
            : 'No findings: nothing measured in this run crossed a threshold.',
        ),
      ];
  return section('diagnosis', 'Diagnosis', ...findings, hotspots(p.hotspots, profiled));
}

function findingCard(f: PayloadFinding, profiled: Profiled): HTMLElement {
  const culprit = f.culprit
    ? h(
        'div',
        { class: 'culprit' },
        h('span', { class: 'muted' }, 'Culprit: '),
        h('code', null, f.culprit.function),
        ' at ',
        h('code', null, f.culprit.line > 0 ? `${f.culprit.file}:${f.culprit.line}` : f.culprit.file),
        ' ',
        profiled(f.culprit.function, f.culprit.file, f.culprit.line) ? flameLink(f.culprit.function, f.culprit.file, f.culprit.line) : null,
      )
    : null;
  return h(
    'article',
    { class: `finding sev-${f.severity}`, data: { code: f.code } },
    h(
      'header',
      null,
      h('span', { class: `badge sev-${f.severity}` }, f.severity),
      ' ',
      h('h3', null, f.title),
      h('span', { class: 'muted code' }, ` ${f.code} · ${f.category} · explains ${pct(f.impact)}`),
    ),
    h('p', { class: 'summary' }, f.summary),
    evidence(f.evidence),
    culprit,
    f.excerpt ? sourceExcerpt(f.excerpt) : null,
    h('div', { class: 'fix' }, h('h4', null, 'Fix'), renderMarkdown(f.recommendation)),
  );
}

function flameLink(name: string, file: string, line: number): HTMLElement {
  return h('button', { class: 'link', on: { click: () => focusRequest.set({ name, file, line }) } }, 'show in flame graph');
}

/** Evidence as a key/value list; units inferred from the documented name suffixes. */
function evidence(ev: Record<string, unknown>): HTMLElement | null {
  const entries = Object.entries(ev);
  if (entries.length === 0) return null;
  return h('dl', { class: 'evidence' }, ...entries.flatMap(([k, v]) => [h('dt', null, k), h('dd', null, formatEvidence(k, v))]));
}

function formatEvidence(key: string, v: unknown): Node | string {
  if (Array.isArray(v) && v.length > 0 && v.every(isFlatObject)) return objectTable(v);
  if (isFlatObject(v)) return objectTable([v]);
  if (typeof v !== 'number') return evidenceValue(v);
  if (/Ms$/.test(key)) return ms(v);
  if (/Bytes$/.test(key)) return bytes(v);
  if (/(Share|Ratio|Fraction|[Uu]tilization)$|^elu/.test(key) || key === 'share') return pct(v);
  return num(v);
}

type Flat = Record<string, string | number | boolean | null>;

function isFlatObject(v: unknown): v is Flat {
  return (
    typeof v === 'object' &&
    v !== null &&
    !Array.isArray(v) &&
    Object.values(v).every((x) => x === null || ['string', 'number', 'boolean'].includes(typeof x))
  );
}

/** Evidence that is a list of records (top functions, work breakdown): a small table. */
function objectTable(rows: Flat[]): HTMLElement {
  const keys = [...new Set(rows.flatMap((r) => Object.keys(r)))];
  const shown = rows.slice(0, 8);
  return h(
    'div',
    null,
    table(
      keys,
      shown.map((r) => keys.map((k) => (r[k] === undefined ? '' : formatEvidence(k, r[k])))),
    ),
    rows.length > shown.length ? h('span', { class: 'muted' }, `…and ${rows.length - shown.length} more`) : null,
  );
}

function hotspots(list: ReportPayload['hotspots'], profiled: Profiled): HTMLElement | null {
  if (list.length === 0) return null;
  const rows: Child[][] = list
    .slice(0, 15)
    .map((s) => [
      h('code', null, s.function),
      h('code', null, s.line ? `${s.file}:${s.line}` : s.file),
      s.kind,
      `${ms(s.selfMs)} (${pct(s.selfShare)})`,
      `${ms(s.totalMs)} (${pct(s.totalShare)})`,
      profiled(s.function, s.file, s.line) ? flameLink(s.function, s.file, s.line) : '',
    ]);
  return h(
    'div',
    { class: 'hotspots' },
    h('h3', null, 'Hotspots (self time after attributing library work to the calling app frame)'),
    table(['function', 'location', 'layer', 'self', 'total', ''], rows),
  );
}
