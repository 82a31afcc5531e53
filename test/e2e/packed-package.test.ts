// hotpath as users install it: `npm pack`, then `npm install ./hotpath-<version>.tgz` in an
// empty project, then `npx hotpath demo` (its restify example's framework installed on first use
// into a cache directory), `npx hotpath run` against a small app there, and the two public
// entry points imported at run time and type-checked with their types. The npm registry must be
// reachable (or npm's cache warm: installs use --prefer-offline). Slow: ~30-60 s.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Report } from '../../src/report/report-schema.js';
import { root } from '../run/helpers/run-cli.js';

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

function exec(file: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = {}, timeoutMs = 120_000): Promise<Result> {
  const child = spawn(file, args, { cwd, env: { ...process.env, NO_COLOR: '1', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => {
    stdout += c;
  });
  child.stderr.on('data', (c: Buffer) => {
    stderr += c;
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const npx = process.platform === 'win32' ? 'npx.cmd' : 'npx';
const tmp = mkdtempSync(join(tmpdir(), 'hotpath-packed-'));
const project = join(tmp, 'user-project');
/** hotpath's cache directory for this test only: the demo's first use installs restify there. */
const cacheHome = join(tmp, 'cache');
const userEnv = { XDG_CACHE_HOME: cacheHome };
let files: string[] = [];

after(() => rmSync(tmp, { recursive: true, force: true }));

describe('the packed package, installed in an empty project', () => {
  before(async () => {
    const pack = await exec(npm, ['pack', '--pack-destination', tmp, '--json'], root);
    assert.equal(pack.code, 0, pack.stderr);
    const [info] = JSON.parse(pack.stdout) as { filename: string; files: { path: string }[] }[];
    files = info.files.map((f) => f.path);
    mkdirSync(project);
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'user-project', private: true, type: 'module' }, null, 2));
    const install = await exec(npm, ['install', '--no-audit', '--no-fund', '--prefer-offline', join(tmp, info.filename)], project);
    assert.equal(install.code, 0, install.stderr);
  });

  test('`files` ships the CLI, the agent bundles, the report UI, the types, docs and examples, and nothing of the tests', () => {
    for (const f of [
      'dist/src/cli/main.js',
      'dist/src/index.js',
      'dist/src/index.d.ts',
      'dist/src/protect/index.js',
      'dist/src/protect/index.d.ts',
      'dist/agent/hotpath-agent.cjs',
      'dist/agent/agent-core.cjs',
      'dist/agent/agent-worker.cjs',
      'dist/report-ui/report.js',
      'examples/restify-etag-leak/server.js',
      'examples/restify-etag-leak/package.json',
      'examples/healthy-http/server.js',
      'docs/run.md',
      'README.md',
      'LICENSE',
      'package.json',
    ])
      assert.ok(files.includes(f), `${f} is in the tarball`);
    const tests = files.filter(
      (f) =>
        /(^|\/)(test|benchmarks)\/|\.test\.(js|ts|d\.ts)$|(^|\/)fixtures\//.test(f) || f.startsWith('dist/test') || f.startsWith('src/'),
    );
    assert.deepEqual(tests, [], 'no tests, fixtures, benchmarks or TypeScript sources');
    assert.equal(existsSync(join(project, 'node_modules', 'hotpath', 'dist', 'test')), false);
  });

  test("`npx hotpath demo` installs the example's framework once into the cache and diagnoses the restify listener leak", async () => {
    const r = await exec(npx, ['--no', 'hotpath', 'demo', '--json'], project, userEnv, 180_000);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /this example needs restify@\^12[^;]*; installing it once into .*hotpath.examples.restify-etag-leak/);
    // stdout is the report alone: npm's output went to stderr.
    const report = JSON.parse(r.stdout) as Report;
    const leak = report.findings.find((f) => f.category === 'listener-leak');
    assert.ok(leak, report.findings.map((f) => f.code).join(', '));
    assert.deepEqual([leak.culprit?.function, leak.culprit?.file], ['attachAfterEvent', 'util.js']);
    const cached = readdirSync(join(cacheHome, 'hotpath', 'examples'));
    assert.deepEqual(cached.filter((d) => d.startsWith('restify-etag-leak-')).length, 1, cached.join(', '));
    assert.equal(existsSync(join(project, 'node_modules', 'restify')), false, "nothing is installed into the user's project");
    // Second use: straight from the cache, no install.
    const again = await exec(npx, ['--no', 'hotpath', 'demo', 'restify-etag-leak', '--out', join(tmp, 'again')], project, userEnv, 180_000);
    assert.equal(again.code, 0, again.stderr);
    assert.doesNotMatch(again.stderr, /installing/);
    assert.match(again.stderr, /listener-leak/);
  });

  test('`npx hotpath run` diagnoses a small app of the project', async () => {
    writeFileSync(
      join(project, 'app.js'),
      [
        "import { createServer } from 'node:http';",
        "createServer((req, res) => res.end(JSON.stringify({ ok: true }))).listen(0, '127.0.0.1');",
      ].join('\n'),
    );
    const r = await exec(npx, ['--no', 'hotpath', 'run', '-d', '1', '-c', '2', '--json', '--', 'node', 'app.js'], project, userEnv);
    assert.equal(r.code, 0, r.stderr);
    const report = JSON.parse(r.stdout) as Report;
    assert.ok(report.load && report.load.requests.total > 0, 'load reached the app');
    const runDir = readdirSync(join(project, '.hotpath'));
    assert.ok(
      runDir.some((d) => existsSync(join(project, '.hotpath', d, 'report.html'))),
      runDir.join(', '),
    );
  });

  test('`hotpath` and `hotpath/protect` import at run time and type-check with their own types', async () => {
    writeFileSync(
      join(project, 'use.ts'),
      [
        "import { protect } from 'hotpath/protect';",
        "import { load, type LoadResult } from 'hotpath';",
        'const guard = protect({ maxEventLoopDelay: 50, exempt: ["/health"] });',
        'const middleware: typeof guard.express = guard.express;',
        'guard.close();',
        "const run: Promise<LoadResult> = load({ url: 'http://127.0.0.1:1/', duration: 1 });",
        '// @ts-expect-error: the types are real, so a wrong option type is an error',
        "protect({ maxEventLoopDelay: 'fast' });",
        'export { middleware, run };',
      ].join('\n'),
    );
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify(
        {
          compilerOptions: {
            module: 'nodenext',
            moduleResolution: 'nodenext',
            target: 'es2022',
            strict: true,
            noEmit: true,
            skipLibCheck: false,
            types: ['node'],
            typeRoots: [join(root, 'node_modules', '@types')],
          },
          files: ['use.ts'],
        },
        null,
        2,
      ),
    );
    const tsc = await exec(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'], project);
    assert.equal(tsc.code, 0, tsc.stdout + tsc.stderr);

    writeFileSync(
      join(project, 'use.mjs'),
      [
        "import { protect } from 'hotpath/protect';",
        "import { load, run, readRunDir } from 'hotpath';",
        'const guard = protect({ maxEventLoopDelay: 50 });',
        'console.log(JSON.stringify([typeof protect, typeof load, typeof run, typeof readRunDir, typeof guard.http, typeof guard.express]));',
        'guard.close();',
      ].join('\n'),
    );
    const r = await exec(process.execPath, ['use.mjs'], project);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout.trim().split('\n').pop() ?? ''), [
      'function',
      'function',
      'function',
      'function',
      'function',
      'function',
    ]);
    assert.ok(readFileSync(join(project, 'node_modules', 'hotpath', 'package.json'), 'utf8').includes('"name": "hotpath"'));
  });
});
