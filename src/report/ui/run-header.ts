// The page header: what was run, how it ended, the key figures, what the agent failed to do,
// and the table of contents.

import { h } from './dom.js';
import { ms, num, pct } from './format.js';
import type { ReportPayload } from '../html/report-payload.js';

export function runHeader(p: ReportPayload, sections: [string, string][]): HTMLElement {
  const r = p.run;
  const outcome =
    r.outcome.status === 'completed'
      ? null
      : h('p', { class: 'outcome warn' }, `Run ${r.outcome.status}${r.outcome.reason ? `: ${r.outcome.reason}` : ''}`);
  const top = p.findings[0];
  const headline = top ? h('p', { class: `headline sev-${top.severity}` }, top.title) : h('p', { class: 'headline' }, 'No problem found.');
  const facts = [
    p.load ? `${num(p.load.requests.perSecond)} req/s, p99 ${ms(p.load.latency.p99)}` : null,
    p.telemetry
      ? `event-loop delay p99 ${ms(p.telemetry.eventLoop.delayP99Ms)}, utilization ${pct(p.telemetry.eventLoop.utilizationMean)}`
      : null,
    p.telemetry?.gc.count ? `GC ${pct(p.telemetry.gc.shareOfWall)} of wall time` : null,
    p.telemetry?.cluster ? clusterFact(p.telemetry.cluster) : null,
    p.telemetry?.agentCost
      ? `agent cost ≥ ${pct(p.telemetry.agentCost.shareOfCpu)} of the target's CPU` +
        (p.telemetry.agentCost.cpuSamplingIntervalUs
          ? ` (CPU profile at ${num(Math.round(1e6 / p.telemetry.agentCost.cpuSamplingIntervalUs))} Hz)`
          : '')
      : null,
    r.nodeVersion ? `Node ${r.nodeVersion}` : null,
    `${r.durationSec.toFixed(1)} s run`,
  ].filter((x): x is string => x !== null);
  return h(
    'header',
    { class: 'page-header' },
    h('div', { class: 'brand' }, 'hotpath report'),
    h('h1', null, h('code', null, r.command.join(' ') || r.url || r.dir)),
    headline,
    outcome,
    h('p', { class: 'muted' }, facts.join(' · ')),
    agentErrors(p),
    h('nav', null, ...sections.map(([id, title]) => h('a', { attrs: { href: `#${id}` } }, title))),
    p.warnings.length
      ? h(
          'details',
          { class: 'warnings' },
          h('summary', null, `${p.warnings.length} warning(s) while reading the run`),
          h('ul', null, ...p.warnings.map((w) => h('li', null, w))),
        )
      : null,
  );
}

/** Requests per cluster worker (report.json telemetry.cluster), and what the primary handed off. */
function clusterFact(c: NonNullable<NonNullable<ReportPayload['telemetry']>['cluster']>): string {
  const shares = c.workers.map((w) => `${Math.round(w.share * 100)} %`).join(' / ');
  const primary = c.primary && c.primary.connectionsHandedOff > 0 ? `, primary ${pct(c.primary.coreShare)} of a core` : '';
  return `${c.workers.length} cluster worker${c.workers.length === 1 ? '' : 's'}: requests ${shares}${primary}`;
}

/** What the in-process agents failed to do: shown open, as each one is data the diagnosis lacks. */
function agentErrors(p: ReportPayload): HTMLElement | null {
  const errors = p.agentErrors ?? [];
  if (errors.length === 0) return null;
  return h(
    'div',
    { class: 'agent-errors warn' },
    h(
      'p',
      null,
      h('strong', null, `The agent failed in ${errors.length} place${errors.length > 1 ? 's' : ''}`),
      ' (each part was disabled; the rest kept running):',
    ),
    h(
      'ul',
      null,
      ...errors.map((e) =>
        h(
          'li',
          null,
          h('code', null, e.what),
          ` in pid ${e.pid}${e.threadId > 0 ? ` thread ${e.threadId}` : ''}${e.target ? '' : ' (not a target)'}: ${e.message}`,
        ),
      ),
    ),
  );
}
