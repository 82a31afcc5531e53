// Each export round-trips on a real profile: pprof decodes back with pprof-format with the
// profile's sample count and total; folded and speedscope totals equal the profile's.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { Profile } from 'pprof-format';
import { buildCallTree } from '../../../src/profile/build-call-tree.js';
import type { CpuProfile } from '../../../src/profile/cpu-profile.js';
import { cpuStackSamples, treeStackSamples, type StackSamples } from '../../../src/profile/stack-samples.js';
import { toPprof } from '../../../src/report/export/pprof.js';
import { toFolded, escapeFoldedFrame } from '../../../src/report/export/folded.js';
import { toSpeedscope } from '../../../src/report/export/speedscope.js';
import { FAKE_DEP, WORK_APP, cpuProfileOf, writeProject } from '../../profile/profile-fixture.js';
import { syntheticProfile } from '../../profile/synthetic-profiles.js';

describe('exports of a real CPU profile', () => {
  let dir: string;
  let profile: CpuProfile;
  let samples: StackSamples;
  let treeTotal: number;
  before(() => {
    dir = writeProject({ 'app.js': WORK_APP, 'node_modules/fakedep/index.js': FAKE_DEP });
    profile = cpuProfileOf(dir, 'app.js', { args: [], intervalUs: 1000 });
    samples = cpuStackSamples(profile, { cwd: dir });
    treeTotal = buildCallTree(profile, { cwd: dir }).totalUs;
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('stack samples carry every sample and the same total as the call tree', () => {
    assert.equal(samples.timeline?.stack.length, profile.samples.length);
    assert.equal(samples.total, treeTotal);
  });

  it('pprof decodes back with the same sample count and total time', () => {
    const decoded = Profile.decode(gunzipSync(toPprof(samples, { startEpochMs: 1_700_000_000_000 })));
    const str = decoded.stringTable.strings;
    assert.equal(str[0], '');
    assert.deepEqual(
      decoded.sampleType.map((t) => [str[Number(t.type)], str[Number(t.unit)]]),
      [
        ['samples', 'count'],
        ['cpu', 'nanoseconds'],
      ],
    );
    let count = 0,
      ns = 0;
    for (const s of decoded.sample) {
      count += Number(s.value[0]);
      ns += Number(s.value[1]);
    }
    assert.equal(count, profile.samples.length);
    assert.ok(Math.abs(ns - treeTotal * 1000) <= decoded.sample.length, `${ns} vs ${treeTotal * 1000}`);
    assert.ok(Number(decoded.period) > 0);
    // Leaf first: the first location of the sample holding the regexp engine is that frame.
    const fnById = new Map(decoded.function.map((f) => [Number(f.id), f]));
    const locById = new Map(decoded.location.map((l) => [Number(l.id), l]));
    const nameOf = (locId: unknown) => str[Number(fnById.get(Number(locById.get(Number(locId))!.line[0].functionId))!.name)];
    const regexSample = decoded.sample.find((s) => nameOf(s.locationId[0]).startsWith('RegExp: '));
    assert.ok(regexSample, 'a sample with the regexp engine as leaf');
    assert.equal(nameOf(regexSample.locationId[1]), 'matchRegex');
    const handler = decoded.function.find((f) => str[Number(f.name)] === 'handler')!;
    assert.equal(str[Number(handler.filename)], 'app.js');
    assert.ok(Number(handler.startLine) > 0);
  });

  it('folded stacks sum to the profile total, one line per unique stack', () => {
    const text = toFolded(samples);
    const lines = text.trimEnd().split('\n');
    let sum = 0;
    const seen = new Set<string>();
    for (const line of lines) {
      const m = /^(.+) (\d+)$/.exec(line);
      assert.ok(m, line);
      assert.ok(!seen.has(m[1]), `duplicate stack ${m[1]}`);
      seen.add(m[1]);
      sum += Number(m[2]);
    }
    assert.equal(sum, treeTotal);
    assert.ok(lines.some((l) => /handler app\.js:\d+;.*matchRegex app\.js:\d+;RegExp: /.test(l)));
  });

  it('speedscope weights sum to the profile total, with valid frame indexes', () => {
    const file = toSpeedscope(samples, { name: 'cpu', exporter: 'hotpath test' });
    assert.equal(file.$schema, 'https://www.speedscope.app/file-format-schema.json');
    const p = file.profiles[0];
    assert.equal(p.unit, 'microseconds');
    assert.equal(p.samples.length, p.weights.length);
    assert.equal(
      p.weights.reduce((a, b) => a + b, 0),
      treeTotal,
    );
    assert.equal(p.endValue, treeTotal);
    const n = file.shared.frames.length;
    assert.ok(p.samples.every((s) => s.length > 0 && s.every((f) => f >= 0 && f < n)));
    assert.ok(file.shared.frames.some((f) => f.name === 'handler' && f.file === 'app.js' && (f.line ?? 0) > 0));
    JSON.parse(JSON.stringify(file));
  });
});

describe('export details', () => {
  it('escapes ";" and line breaks inside folded frame names', () => {
    assert.equal(escapeFoldedFrame('a;b%c\nd'), 'a%3Bb%25c d');
    const p = syntheticProfile('/srv/app');
    p.nodes[1].callFrame.functionName = 'we;ird';
    const text = toFolded(cpuStackSamples(p, { cwd: '/srv/app' }));
    assert.ok(text.includes('we%3Bird app.js:2;'), text);
    assert.equal(
      text
        .trimEnd()
        .split('\n')
        .reduce((s, l) => s + Number(l.split(' ').pop()), 0),
      10_000,
    );
  });

  it('exports aggregated trees (heap) in bytes to every format', () => {
    const tree = buildCallTree(syntheticProfile('/srv/app'), { cwd: '/srv/app' });
    const heapLike = treeStackSamples({ ...tree, unit: 'bytes' });
    assert.equal(heapLike.total, 10_000);
    const decoded = Profile.decode(gunzipSync(toPprof(heapLike)));
    assert.equal(
      decoded.sample.reduce((s, x) => s + Number(x.value[0]), 0),
      10_000,
    );
    assert.equal(decoded.stringTable.strings[Number(decoded.sampleType[0].unit)], 'bytes');
    assert.equal(toSpeedscope(heapLike, { name: 'heap', exporter: 't' }).profiles[0].unit, 'bytes');
  });
});
