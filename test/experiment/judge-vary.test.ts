import { test } from 'node:test';
import assert from 'node:assert/strict';
import { judgeVary } from '../../src/experiment/judge-vary.js';
import { renderVaryMarkdown } from '../../src/experiment/render-vary.js';
import { parseVary } from '../../src/experiment/vary-spec.js';
import type { VaryRun } from '../../src/experiment/vary-result.js';

const spec = parseVary('--max-semi-space-size=16,64,128');
let order = 0;
const measured = (value: string, rps: number, gcShare: number): VaryRun => ({
  value,
  order: ++order,
  runDir: `/runs/${order}`,
  figures: {
    runDir: `/runs/${order}`,
    rps,
    p50Ms: 1000 / rps,
    p99Ms: 4000 / rps,
    errors: 0,
    gcShare,
    rssMaxBytes: 100 * 1048576,
    critical: [],
    warnings: [],
  },
});

test('judgeVary: one row per value with medians, ranked by throughput; a clear lead over repeated runs', () => {
  const runs = [
    measured('16', 900, 0.2),
    measured('64', 1200, 0.05),
    measured('128', 1150, 0.04),
    measured('128', 1140, 0.04),
    measured('64', 1210, 0.05),
    measured('16', 910, 0.2),
    measured('16', 905, 0.2),
    measured('64', 1190, 0.05),
    measured('128', 1160, 0.04),
  ];
  const v = judgeVary(spec, ['node', 'server.js'], 3, runs);
  assert.deepEqual(
    v.rows.map((r) => [r.value, r.rank, r.rps?.median, r.gcShare, r.measured]),
    [
      ['16', 3, 905, 0.2, 3],
      ['64', 1, 1200, 0.05, 3],
      ['128', 2, 1150, 0.04, 3],
    ],
  );
  assert.equal(v.best?.value, '64');
  assert.equal(v.best?.leadOverNext?.value, '128');
  assert.equal(v.best?.clear, true, JSON.stringify(v.best));
  assert.match(
    v.best?.evidence ?? '',
    /^1200\.0 req\/s, \+4\.3% over --max-semi-space-size=128 \(95% interval \+[\d.]+% … \+[\d.]+%\), p99 3\.3 ms, GC 5\.0% of wall time, RSS 100 MB$/,
  );
  const md = renderVaryMarkdown(v);
  assert.match(md, /\| `--max-semi-space-size=64` \| 1 \| 1200\.0 req\/s \| 3\.3 ms \| 5\.0% \| 100 MB \| 3\/3 \|/);
  assert.match(md, /\*\*Best: `--max-semi-space-size=64`\*\*/);
});

test('judgeVary: overlapping runs are no clear winner; one run each says to repeat; failed runs are listed', () => {
  const noisy = judgeVary(spec, ['node', 'server.js'], 2, [
    measured('16', 1000, 0.1),
    measured('64', 1100, 0.1),
    measured('128', 900, 0.1),
    measured('128', 1000, 0.1),
    measured('64', 950, 0.1),
    measured('16', 1050, 0.1),
  ]);
  assert.equal(noisy.best?.clear, false);
  assert.match(noisy.best?.evidence ?? '', /within the noise of the runs/);
  const once = judgeVary(spec, ['node', 'server.js'], 1, [
    measured('16', 1000, 0.1),
    measured('64', 1100, 0.1),
    { value: '128', order: 99, runDir: '/runs/99', failed: 'no load results: failed' },
  ]);
  assert.equal(once.best?.value, '64');
  assert.match(once.best?.evidence ?? '', /add --repeat 3/);
  assert.equal(once.rows[2].rank, undefined);
  assert.match(renderVaryMarkdown(once), /- `128` \(run 99\): no load results: failed/);
  const none = judgeVary(spec, ['node', 'server.js'], 1, [{ value: '16', order: 1, runDir: '/r', failed: 'x' }]);
  assert.equal(none.best, undefined);
  assert.match(renderVaryMarkdown(none), /no best value/);
});
