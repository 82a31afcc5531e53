// report.md: the verdict, each finding with its culprit file:line, evidence and fix, the
// key load figures and the hotspots table; strings from the target stay text.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { renderReportMarkdown, mdText } from '../../../src/report/export/report-md.js';
import type { Report } from '../../../src/report/report-schema.js';
import type { LoadResult } from '../../../src/load/load-result.js';

const latency = {
  count: 1000,
  min: 1,
  mean: 40,
  stdev: 5,
  p50: 38.125,
  p75: 45,
  p90: 50,
  p97_5: 60,
  p99: 91.5,
  p999: 120,
  p9999: 130,
  max: 140.25,
};

function load(): LoadResult {
  return {
    version: 1,
    url: 'http://127.0.0.1:3000/',
    model: 'closed',
    options: { connections: 10, pipelining: 1, workers: 1, duration: 5, warmup: 1, timeoutMs: 10_000, keepalive: true, method: 'GET' },
    start: 0,
    end: 5000,
    durationMs: 5000,
    requests: { total: 1234, sent: 1240, perSecond: 246.8, inFlightAtEnd: 0 },
    latency,
    throughput: { bytesRead: 1, bytesWritten: 1, bytesReadPerSecond: 1 },
    statusCodes: { 200: 1234 },
    errors: { total: 3, timeouts: 1, byCode: { ECONNRESET: 2 }, parse: 0 },
    connections: { opened: 10, closedByServer: 0 },
    timeline: [],
    generator: { cpuUserMs: 1, cpuSystemMs: 1, maxElu: 0.2, workers: [], saturated: false, warnings: [] },
  } as LoadResult;
}

function report(): Report {
  return {
    version: 1,
    hotpathVersion: '0.1.0',
    runDir: '.hotpath/run1',
    target: { command: ['node', 'server.js'], cwd: '/srv/app', nodeVersion: 'v22.1.0', outcome: { status: 'completed' } },
    load: load(),
    telemetry: null,
    findings: [
      {
        code: 'HOTPATH_EVENT_LOOP_BLOCKING',
        category: 'event-loop-blocking',
        severity: 'critical',
        title: 'Synchronous PBKDF2 blocks the event loop',
        summary: 'pbkdf2Sync runs on every request to /auth.',
        evidence: { elu: 0.97, delayP99Ms: 310.5, cryptoShare: 0.81, nested: { a: 1 } },
        culprit: { function: 'login', file: 'routes/auth.js', line: 42, column: 7 },
        recommendation: 'Use `crypto.pbkdf2` (async) or a worker pool.',
        impact: 0.8,
      },
      {
        code: 'HOTPATH_SERIALIZATION',
        category: 'serialization',
        severity: 'warning',
        title: 'JSON serialization',
        summary: 'JSON.stringify takes 12% of CPU.',
        evidence: { share: 0.12 },
        culprit: { function: '<script>alert(1)</script>', file: 'lib/x|y.js', line: 7 },
        recommendation: 'Cache the string.',
        impact: 0.12,
      },
    ],
    hotspots: [
      { function: 'login', file: 'routes/auth.js', line: 42, kind: 'app', selfMs: 812.5, selfShare: 0.81, totalMs: 900, totalShare: 0.9 },
      {
        function: 'a|b<img src=x onerror=alert(1)>',
        file: '',
        line: 0,
        kind: 'native',
        selfMs: 3,
        selfShare: 0.003,
        totalMs: 3,
        totalShare: 0.003,
      },
    ],
  };
}

describe('renderReportMarkdown', () => {
  it('gives the verdict, findings with culprit file:line, evidence and fix', () => {
    const md = renderReportMarkdown(report());
    assert.match(
      md,
      /\*\*Verdict:\*\* 2 problems found\. Main: Synchronous PBKDF2 blocks the event loop in `login` \(`routes\/auth\.js:42`\)/,
    );
    assert.match(md, /### 1\. Synchronous PBKDF2 blocks the event loop \(critical, event-loop-blocking\)/);
    assert.match(md, /\*\*Culprit:\*\* `login` at `routes\/auth\.js:42:7`/);
    assert.match(md, /- delayP99Ms: 310\.5/);
    assert.ok(!md.includes('nested'), 'objects are left out of the evidence list');
    assert.match(md, /Use `crypto\.pbkdf2` \(async\) or a worker pool\./);
    assert.ok(md.indexOf('### 1.') < md.indexOf('### 2.'));
  });

  it('shows the key load figures and the hotspots table', () => {
    const md = renderReportMarkdown(report());
    assert.match(md, /\| 246\.8 \| 38\.13 \| 91\.5 \| 140\.25 \| 3 \| 1,234 \| 5 s \|/);
    assert.match(md, /\| login \| `routes\/auth\.js:42` \| app \| 812\.5 \| 81% \| 90% \|/);
  });

  it('keeps target strings as text', () => {
    const md = renderReportMarkdown(report());
    // Outside code spans (which render literally) every < is backslash-escaped, so no tag forms.
    const prose = md.replace(/``[^`]*``|`[^`]*`/g, '');
    assert.doesNotMatch(prose, /(^|[^\\])</m, prose);
    assert.match(md, /`<script>alert\(1\)<\/script>`/);
    assert.match(md, /a\\\|b\\<img src=x onerror=alert\\\(1\\\)\\>/);
    assert.equal(mdText('a|b\nc'), 'a\\|b c');
  });

  it('says healthy when nothing is wrong', () => {
    const r = report();
    r.findings = [
      {
        code: 'HOTPATH_HEALTHY',
        category: 'healthy',
        severity: 'info',
        title: 'Healthy',
        summary: 'Headroom 60%.',
        evidence: { headroom: 0.6 },
        recommendation: 'Nothing to do.',
        impact: 0,
      },
    ];
    const md = renderReportMarkdown(r);
    assert.match(md, /\*\*Verdict:\*\* healthy/);
    assert.match(md, /Headroom 60%/);
  });

  it('gives no verdict when the diagnosis is incomplete, and lists what the agent failed to do', () => {
    const r = report();
    r.findings = [
      {
        code: 'HOTPATH_INCOMPLETE',
        category: 'incomplete',
        severity: 'warning',
        title: "The diagnosis is incomplete: missing the target's CPU profile",
        summary: 'hotpath cannot vouch for this run.',
        evidence: { cpuProfile: false },
        recommendation: 'Run again.',
        impact: 0,
      },
    ];
    r.agentErrors = [{ pid: 42, threadId: 0, what: 'profiler', message: 'inspector | closed', target: true }];
    const md = renderReportMarkdown(r);
    assert.match(md, /\*\*Verdict:\*\* no verdict: the diagnosis is incomplete/);
    assert.doesNotMatch(md, /healthy/);
    assert.match(md, /## Agent errors[\s\S]*\| `profiler` \| 42 \| yes \| inspector \\\| closed \|/);
  });
});
