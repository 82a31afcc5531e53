// Every run states what the agent cost the server it measured (report.json telemetry.agentCost,
// the terminal, the HTML header; docs/agent.md, Cost): present and plausible in a real run, and
// lower with the hooks and the CPU profile off than by default on the same server. Compared as
// shares of each run's own CPU, over interleaved pairs, so a busy machine slows both alike.

import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Report } from '../../src/report/report-schema.js';
import { apps, onlyRunDir, runCli, tempOut } from '../run/helpers/run-cli.js';
import { hook, launch, openReport } from '../report/html/browser.js';
import { defaultCpuIntervalUs } from '../../src/run/cpu-interval.js';

type Cost = NonNullable<NonNullable<Report['telemetry']>['agentCost']>;

async function costOf(flags: string[]): Promise<{ cost: Cost | undefined; stderr: string; report: Report; dir: string }> {
  const tmp = tempOut();
  after(tmp.cleanup);
  const r = await runCli(['run', '-w', '1', '-c', '8', '-d', '3', ...flags, '--out', tmp.out, '--', 'node', 'json-hash-server.cjs'], {
    cwd: apps,
  });
  assert.equal(r.code, 0, r.stderr);
  const dir = onlyRunDir(tmp.out);
  const report = JSON.parse(readFileSync(join(dir, 'report.json'), 'utf8')) as Report;
  return { cost: report.telemetry?.agentCost, stderr: r.stderr, report, dir };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

describe("hotpath run: the agent's own cost", () => {
  test('a default run states its cost: present, plausible, its parts adding up, in the terminal and the HTML header', async () => {
    const { cost, stderr, dir } = await costOf([]);
    assert.ok(cost, 'report.json telemetry.agentCost');
    assert.ok(cost.shareOfCpu > 0 && cost.shareOfCpu < 0.5, `share ${cost.shareOfCpu}`);
    assert.ok(cost.mainThreadMs > 0, "the agent's callbacks on the loop were timed");
    assert.ok(Math.abs(cost.mainThreadMs + cost.workerMs + cost.profilerThreadMs - cost.agentCpuMs) < 0.5);
    assert.ok(Math.abs(cost.agentCpuMs / cost.targetCpuMs - cost.shareOfCpu) < 0.001);
    assert.ok(cost.loopShare > 0 && cost.loopShare < 0.5, `loop share ${cost.loopShare}`);
    if (process.platform === 'linux') assert.ok(cost.profilerThreadMs > 0, "V8's profiler thread is read on Linux");
    assert.match(stderr, /Agent cost: [\d.]+ % of the target's CPU/);
    // The CPU profile's rate depends on the load (src/run/cpu-interval.ts): 1,000 samples over 3 s.
    assert.equal(cost.cpuSamplingIntervalUs, defaultCpuIntervalUs(3, false));
    assert.equal(cost.cpuSamplingIntervalUs, 3000);
    assert.match(stderr, /CPU profile at 333 Hz/);
    const browser = await launch();
    try {
      const opened = await openReport(browser, join(dir, 'report.html'));
      assert.deepEqual((await hook(opened.page)).errors, []);
      const header = await opened.page.textContent('header.page-header');
      assert.match(header ?? '', /agent cost ≥ [\d.]+% of the target's CPU \(CPU profile at 333 Hz\)/);
    } finally {
      await browser.close();
    }
  });

  test('with --no-hooks --no-profile the stated cost is lower than by default, on the same server', async () => {
    const light: number[] = [];
    const full: number[] = [];
    let lower = 0;
    // Interleaved pairs, the order swapped each time: drift on a shared machine hits both sides.
    for (let i = 0; i < 3; i++) {
      const pair = i % 2 === 0 ? [[], ['--no-hooks', '--no-profile']] : [['--no-hooks', '--no-profile'], []];
      const shares: number[] = [];
      for (const flags of pair) {
        const { cost } = await costOf(flags);
        assert.ok(cost, 'report.json telemetry.agentCost');
        assert.ok(cost.shareOfCpu > 0 && cost.shareOfCpu < 0.5, `share ${cost.shareOfCpu} (${flags.join(' ') || 'default'})`);
        // Without the CPU profile V8's profiler thread runs only while a stall is sampled for its cause.
        if (flags.length > 0)
          assert.ok(cost.profilerThreadMs < cost.agentCpuMs, `profiler thread ${cost.profilerThreadMs} ms without a profile`);
        shares.push(cost.shareOfCpu);
        (flags.length === 0 ? full : light).push(cost.shareOfCpu);
      }
      const [def, noHooks] = i % 2 === 0 ? shares : [shares[1], shares[0]];
      if (noHooks < def) lower++;
    }
    assert.ok(
      median(light) < median(full),
      `median ${median(light)} (--no-hooks --no-profile) against ${median(full)} (default): ${light} / ${full}`,
    );
    assert.ok(lower >= 2, `lower in ${lower} of 3 pairs: ${light} / ${full}`);
  });
});
