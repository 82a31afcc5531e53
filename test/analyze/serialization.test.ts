import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serialization } from '../../src/analyze/serialization.js';
import { syntheticRun } from '../fixtures/telemetry/synthetic-run.js';
import { syntheticCpuProfile } from '../fixtures/telemetry/synthetic-profile.js';
import { NOISE_LEVELS, SEEDS } from '../fixtures/telemetry/noise-levels.js';

const cwd = '/srv/app';

for (const noise of NOISE_LEVELS) {
  test(`serialization: JSON.stringify at 45 % of CPU names the caller (noise ${noise})`, () => {
    const cpu = syntheticCpuProfile(
      [
        { name: 'sendReport', file: 'api.js', line: 30, share: 0.05, callee: { name: 'JSON.stringify', file: '', share: 0.45 } },
        { name: 'auth', file: 'api.js', line: 5, share: 0.1 },
      ],
      { cwd },
    );
    for (const seed of SEEDS) {
      const [f] = serialization(syntheticRun({ seed, noise, cwd, elu: 0.95, profiles: [cpu] }));
      assert.ok(f);
      assert.equal(f.category, 'serialization');
      assert.deepEqual([f.culprit?.function, f.culprit?.file, f.culprit?.line], ['sendReport', 'api.js', 30]);
      assert.ok(Math.abs((f.evidence.jsonShare as number) - 0.45 / 0.95) < 0.05);
    }
  });

  test(`serialization: a little JSON in a busy server is fine (noise ${noise})`, () => {
    const cpu = syntheticCpuProfile(
      [{ name: 'handler', file: 'api.js', line: 3, share: 0.3, callee: { name: 'JSON.stringify', file: '', share: 0.05 } }],
      { cwd },
    );
    for (const seed of SEEDS) assert.deepEqual(serialization(syntheticRun({ seed, noise, cwd, elu: 0.95, profiles: [cpu] })), []);
  });
}

test('serialization: mostly JSON.parse gets the parse-once advice, not the stringify one', () => {
  const cpu = syntheticCpuProfile(
    [{ name: 'validateOrder', file: 'lib/validate.js', line: 14, share: 0.05, callee: { name: 'JSON.parse', file: '', share: 0.6 } }],
    { cwd },
  );
  const [f] = serialization(syntheticRun({ cwd, elu: 0.95, profiles: [cpu] }));
  assert.equal(f.culprit?.function, 'validateOrder');
  assert.equal(f.evidence.mostlyParse, true);
  assert.match(f.recommendation, /parse once/);
  assert.doesNotMatch(f.recommendation, /fast-json-stringify/);
});

test('serialization: JSON.parse run by a body parser with no app code on the stack names the package, not an app function', () => {
  const dir = mkdtempSync(join(tmpdir(), 'hotpath-serialization-'));
  try {
    mkdirSync(join(dir, 'node_modules', 'body-parser', 'lib', 'types'), { recursive: true });
    writeFileSync(
      join(dir, 'node_modules', 'body-parser', 'lib', 'types', 'json.js'),
      'function parse (body) {\n  return JSON.parse(body, reviver)\n}\n',
    );
    writeFileSync(join(dir, 'handler.js'), 'function ingest(req, res) {\n  res.json(JSON.parse(req.query.meta))\n}\n');
    const cpu = syntheticCpuProfile(
      [
        { name: 'parse', file: 'node_modules/body-parser/lib/types/json.js', line: 1, share: 0.6, hotLine: 2 },
        // A little JSON of the app's own: not the culprit of the body parser's.
        { name: 'ingest', file: 'handler.js', line: 1, share: 0.05, hotLine: 2 },
      ],
      { cwd: dir },
    );
    const [f] = serialization(syntheticRun({ cwd: dir, elu: 0.95, rps: 12, profiles: [cpu], requestBytes: 3 * 1024 * 1024 }));
    assert.equal(f.culprit, undefined);
    assert.equal(f.evidence.noAppCode, true);
    assert.equal(f.evidence.workPackage, 'body-parser');
    assert.equal(f.evidence.workSource, 'node_modules/body-parser/lib/types/json.js:2');
    assert.equal(f.evidence.mostlyParse, true);
    assert.match(f.summary, /JSON\.parse in the body-parser package/);
    assert.match(f.recommendation, /size limit/);
    // Small requests: parse advice, without the request-body part.
    const [g] = serialization(syntheticRun({ cwd: dir, elu: 0.95, rps: 12, profiles: [cpu] }));
    assert.match(g.recommendation, /Parse less/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("serialization: an app hook asking for more JSON work than the framework's own stringify is the culprit", () => {
  const dir = mkdtempSync(join(tmpdir(), 'hotpath-serialization-'));
  try {
    mkdirSync(join(dir, 'node_modules', 'fastify', 'lib'), { recursive: true });
    writeFileSync(
      join(dir, 'node_modules', 'fastify', 'lib', 'reply.js'),
      'function serialize (payload) {\n  return JSON.stringify(payload)\n}\n',
    );
    // An onSend hook parsing the serialized payload back, adding a field and stringifying it again.
    const hook = (parse: number, stringify: number) =>
      syntheticCpuProfile(
        [
          {
            name: 'serialize',
            file: 'node_modules/fastify/lib/reply.js',
            line: 1,
            share: 0.05,
            callee: { name: 'JSON.stringify', file: '', share: 0.25 },
          },
          {
            name: 'addRequestMeta',
            file: 'lib/meta.js',
            line: 5,
            share: 0.01,
            callee: { name: 'JSON.parse', file: '', share: parse },
          },
          {
            name: 'stringifyAgain',
            file: 'lib/meta.js',
            line: 12,
            share: 0.01,
            callee: { name: 'JSON.stringify', file: '', share: stringify },
          },
        ],
        { cwd: dir },
      );
    const [f] = serialization(syntheticRun({ cwd: dir, elu: 0.98, profiles: [hook(0.35, 0.05)] }));
    assert.equal(f.culprit?.function, 'addRequestMeta', f.summary);
    assert.equal(f.evidence.noAppCode, undefined);
    // The hook's JSON smaller than the framework's: the framework's stringify, where it ran, is the finding.
    const [g] = serialization(syntheticRun({ cwd: dir, elu: 0.98, profiles: [hook(0.1, 0.05)] }));
    assert.equal(g.culprit, undefined, g.summary);
    assert.equal(g.evidence.noAppCode, true);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('serialization: ranked by the JSON work its named caller asks for, at least half of it', () => {
  const split = syntheticCpuProfile(
    [
      { name: 'getOrder', file: 'server.js', line: 12, share: 0.05, callee: { name: 'JSON.stringify', file: '', share: 0.26 } },
      { name: 'logRequest', file: 'lib/log.js', line: 3, share: 0.05, callee: { name: 'JSON.stringify', file: '', share: 0.14 } },
    ],
    { cwd },
  );
  const [f] = serialization(syntheticRun({ seed: 1, cwd, elu: 0.95, profiles: [split] }));
  assert.equal(f.culprit?.function, 'getOrder');
  const callerShare = f.evidence.callerJsonShare as number;
  assert.ok(callerShare > 0.55 && callerShare < 0.75, String(callerShare));
  const whole = (f.evidence.jsonShare as number) * (f.evidence.eluMean as number);
  assert.ok(Math.abs(f.impact - whole * callerShare) < 0.01, `${f.impact} against ${whole} × ${callerShare}`);
});
