// Fuzz test of the run-directory readers (issue 23): a few hundred seeded random damages of a
// real run directory (helpers/fuzz-run-dir.ts); `npm run bench -- readers-fuzz` runs many more.
// Every case must end in a report with warnings or a coded error, quickly, in bounded memory,
// and write nothing outside its directory.

import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { realRunDir, tempBase } from './helpers/real-run.js';
import { fuzzRunDir } from './helpers/fuzz-run-dir.js';

const base = tempBase();
after(() => rmSync(base, { recursive: true, force: true }));

const CASES = Number(process.env.HOTPATH_FUZZ_CASES ?? 300);

test(`issue 23: ${CASES} damaged run directories each end in a report or a coded error`, { timeout: 240_000 }, async () => {
  const source = realRunDir(base);
  let maxRss = 0;
  const problems = await fuzzRunDir({
    source,
    scratch: base,
    seeds: Array.from({ length: CASES }, (_, i) => 23_000 + i),
    maxCaseMs: 15_000,
    onCase: () => {
      maxRss = Math.max(maxRss, process.memoryUsage().rss);
    },
  });
  assert.deepEqual(
    problems.map((p) => `seed ${p.seed} ${p.command}: ${p.problem} after ${p.mutations.join('; ')}\n${p.error ?? ''}`),
    [],
  );
  assert.ok(maxRss < 1024 * 1024 * 1024, `memory stays bounded: ${Math.round(maxRss / 1048576)} MB RSS`);
});
