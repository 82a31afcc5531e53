// report.html as a file: one self-contained page with a CSP that forbids requests and pins
// the inlined script by hash, the run's data compressed where markup cannot escape it, and
// a payload that holds the run (excerpts, telemetry, every profile) in compact form.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { writeReportHtml } from '../../../src/report/html/write-report-html.js';
import { renderReportHtml } from '../../../src/report/html/render-report-html.js';
import { buildPayload } from '../../../src/report/html/build-payload.js';
import type { ReportPayload } from '../../../src/report/html/report-payload.js';
import { readCpuProfile } from '../../../src/profile/read-profile.js';
import { sampleWeights } from '../../../src/profile/sample-weights.js';
import { cpuProfilePayload } from '../../../src/report/html/profile-payload.js';
import { decodeProfile, selfWeights } from '../../../src/report/ui/flame/profile-model.js';
import {
  captureProfiles,
  fixtureRun,
  renameFunctions,
  CULPRIT_LINE,
  HOSTILE_NAME,
  HOSTILE_SCRIPT,
  type Captured,
} from './report-fixture.js';

function embedded(html: string): ReportPayload {
  const m = /<script type="application\/x-hotpath-data\+gzip;base64" id="hotpath-data">([A-Za-z0-9+/=]+)<\/script>/.exec(html);
  assert.ok(m, 'data element present');
  return JSON.parse(gunzipSync(Buffer.from(m[1], 'base64')).toString('utf8')) as ReportPayload;
}

describe('writeReportHtml', () => {
  let cap: Captured;
  before(() => {
    cap = captureProfiles(250);
  });
  after(() => rmSync(cap.dir, { recursive: true, force: true }));

  it('writes one self-contained page whose CSP forbids requests and pins the script by hash', async () => {
    const { run, report } = fixtureRun(cap);
    const path = await writeReportHtml(run, report);
    assert.equal(path, join(cap.dir, 'report.html'));
    const html = readFileSync(path, 'utf8');
    const csp = /<meta http-equiv="Content-Security-Policy" content="([^"]+)">/.exec(html)?.[1] ?? '';
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /connect-src 'none'/);
    const scripts = [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => m[1]);
    assert.equal(scripts.length, 1, 'one executable script');
    const hash = createHash('sha256').update(scripts[0]).digest('base64');
    assert.ok(csp.includes(`script-src 'sha256-${hash}'`), 'the CSP allows exactly the inlined UI');
    assert.doesNotMatch(html, /<(link|img|iframe)\b|src=|https?:\/\/(?!127\.0\.0\.1)/i, 'nothing loads from elsewhere');
  });

  it('keeps hostile strings out of the markup: they exist only inside the compressed data', async () => {
    const hostile = renameFunctions(cap, { hashWork: HOSTILE_NAME, parseWork: HOSTILE_SCRIPT });
    const { run, report } = fixtureRun(hostile, { hostile: true });
    run.meta.command = ['node', `${HOSTILE_SCRIPT}.js`];
    const html = renderReportHtml(await buildPayload(run, report));
    assert.ok(!html.includes(HOSTILE_SCRIPT) && !html.includes(HOSTILE_NAME), 'no hostile markup in the page');
    assert.ok(!html.replace(/<title>.*<\/title>/, '').includes('__xss'), 'hostile text only in the (escaped) title');
    assert.equal(html.match(/<\/script>/g)?.length, 2, 'only the two real script elements close');
    assert.match(html, /<title>hotpath: node &#60;script&#62;window.__xss=2&#60;\/script&#62;.js<\/title>/);
    const payload = embedded(html);
    assert.equal(payload.findings[0].title.includes(HOSTILE_SCRIPT), true);
    const names = payload.profiles[0].strings;
    assert.ok(names.includes(HOSTILE_NAME) && names.includes(HOSTILE_SCRIPT));
  });

  it('keeps inlined code from closing its element or opening an HTML comment', async () => {
    const { run, report } = fixtureRun(cap, { heap: false });
    const html = renderReportHtml(await buildPayload(run, report, { profiles: false }), {
      script: 'window.s = "</script><!--<script>";',
      style: 'a::after { content: "</style>"; }',
    });
    assert.equal(html.match(/<\/script>/g)?.length, 2);
    assert.equal(html.match(/<\/style>/g)?.length, 1);
    assert.ok(!html.includes('<!--'));
    assert.ok(html.includes('window.s = "<\\/script><\\!--<script>";'));
  });

  it('embeds the run: source excerpt, phases, telemetry columns, and every profile in compact form', async () => {
    const { run, report } = fixtureRun(cap);
    const p = embedded(renderReportHtml(await buildPayload(run, report)));
    const x = p.findings[0].excerpt;
    assert.ok(x, 'excerpt read at report time');
    assert.equal(x.line, CULPRIT_LINE);
    assert.equal(x.lines[x.line - x.firstLine], 'function handleRequest(phase, i) {');
    assert.deepEqual(
      p.phases.map((ph) => [ph.phase, ph.start, ph.end]),
      [
        ['warmup', 1, 2],
        ['load', 2, 4],
      ],
    );
    assert.equal(p.threads.length, 1);
    assert.equal(p.threads[0].t.length, 20);
    assert.equal(p.threads[0].t[0], 2.1);
    assert.equal(p.threads[0].stalls.t.length, 1);
    assert.deepEqual(
      p.profiles.map((q) => q.kind),
      ['cpu', 'heap'],
    );
    const cpu = p.profiles[0];
    const raw = await readCpuProfile(cap.cpuPath);
    const s = cpu.samples!;
    assert.ok(s.node.length > 100 && s.node.length <= raw.samples.length, `${s.node.length} of ${raw.samples.length} samples stored`);
    assert.ok(s.node.length < raw.samples.length, 'consecutive samples of one node are merged');
    // Merging keeps every weight: stored times plus the last weight span the sampled time.
    const span = s.dt.reduce((a, b) => a + b, 0) + s.lastWeight;
    const w = sampleWeights(raw);
    const rawSpan = w.time[w.order[w.order.length - 1]] - raw.startTime + w.weight[w.order[w.order.length - 1]];
    assert.ok(Math.abs(span - rawSpan) <= 2, `${span} vs ${rawSpan}`);
    assert.ok(
      s.node.every((v, i) => i === 0 || v !== s.node[i - 1] || s.dt[i] > 0),
      'no zero-length duplicates',
    );
    assert.equal(cpu.nodes.parent[0], -1);
    assert.ok(
      cpu.nodes.parent.every((par, i) => i === 0 || (par >= 0 && par < i)),
      'pre-order: parents first',
    );
    assert.ok(cpu.strings.length < cpu.frames.name.length * 2 + 2, 'names and files interned');
  });

  it("sums samples into time slots past the sample cap, keeping every node's weight", async () => {
    const raw = await readCpuProfile(cap.cpuPath);
    const who = { id: 'x', label: 'x', pid: 1, threadId: 0, start: 0 };
    const full = cpuProfilePayload(raw, who, { cwd: cap.dir, runStart: 0 });
    const capped = cpuProfilePayload(raw, who, { cwd: cap.dir, runStart: 0, maxSamples: 40 });
    assert.ok(capped.samples!.node.length <= 40 && capped.samples!.w, `${capped.samples!.node.length} samples`);
    assert.match(capped.notes.join(' '), /summed into \d+ ms slots/);
    const a = selfWeights(decodeProfile(full), null);
    const b = selfWeights(decodeProfile(capped), null);
    for (let i = 0; i < a.length; i++) assert.ok(Math.abs(a[i] - b[i]) < 1e-6, `node ${i}: ${a[i]} vs ${b[i]}`);
  });

  it('counts time from the first record when meta.json was lost', async () => {
    const { run, report } = fixtureRun(cap, { heap: false });
    run.meta.startedAt = 0;
    const p = await buildPayload(run, report, { profiles: false });
    assert.equal(p.run.startedAt, run.threads[0].samples[0].t - 100);
    assert.equal(p.threads[0].t[0], 0.1);
  });

  it('keeps reading when a profile is unreadable, and says so', async () => {
    const { run, report } = fixtureRun(cap);
    run.profiles[0] = { ...run.profiles[0], path: join(cap.dir, 'missing.cpuprofile') };
    const p = await buildPayload(run, report);
    assert.deepEqual(
      p.profiles.map((q) => q.kind),
      ['heap'],
    );
    assert.match(p.warnings.join('\n'), /cpu profile .*missing\.cpuprofile left out/);
  });

  it('gives no excerpt for node internals, missing files or lines past the end', async () => {
    const { run, report } = fixtureRun(cap);
    const f = report.findings[0];
    report.findings = [
      { ...f, culprit: { function: 'x', file: 'node:internal/x', line: 3 } },
      { ...f, culprit: { function: 'x', file: 'nope.js', line: 3 } },
      { ...f, culprit: { function: 'x', file: 'server.js', line: 100_000 } },
    ];
    const p = await buildPayload(run, report);
    assert.deepEqual(
      p.findings.map((q) => q.excerpt),
      [undefined, undefined, undefined],
    );
  });
});
