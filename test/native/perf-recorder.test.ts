// Finding perf and turning its refusals into a reason and a fix.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findPerf, perfFailure } from '../../src/native/perf-recorder.js';

test('findPerf: not Linux, not on PATH, on PATH', () => {
  const mac = findPerf({ PATH: '/usr/bin' }, 'darwin');
  assert.ok('reason' in mac && /darwin/.test(mac.reason) && /hotpath prof/.test(mac.fix));
  const dir = mkdtempSync(join(tmpdir(), 'hotpath-findperf-'));
  try {
    const none = findPerf({ PATH: dir }, 'linux');
    assert.ok('reason' in none && /not installed/.test(none.reason) && /linux-perf/.test(none.fix));
    writeFileSync(join(dir, 'perf'), '#!/bin/sh\n');
    chmodSync(join(dir, 'perf'), 0o755);
    assert.deepEqual(findPerf({ PATH: `/nonexistent:${dir}` }, 'linux'), { path: join(dir, 'perf') });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("perfFailure: paranoid and EACCES refusals get the sysctl fix; a kernel mismatch the package; anything else perf's own words", () => {
  const refused = perfFailure(
    'Error:\nAccess to performance monitoring and observability operations is limited.\nConsider adjusting /proc/sys/kernel/perf_event_paranoid setting',
    255,
  );
  assert.match(refused.reason, /not permitted .*perf_event_paranoid is/);
  assert.match(refused.fix, /sysctl -w kernel\.perf_event_paranoid=1/);
  assert.match(perfFailure('Error: No permission to enable cpu-clock event.', 255).reason, /not permitted/);
  assert.match(
    perfFailure(
      'WARNING: perf not found for kernel 6.8.0-45\n\n  You may need to install the following packages for this specific kernel:\n    linux-tools-6.8.0-45-generic',
      2,
    ).reason,
    /does not match the running kernel/,
  );
  assert.equal(
    perfFailure("Error:\nCouldn't create thread/CPU maps: No such process", 255).reason,
    "perf record failed: Couldn't create thread/CPU maps: No such process",
  );
});
