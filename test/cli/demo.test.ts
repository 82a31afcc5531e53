import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { demoCommand, examplesDir, exampleRunArgv, listExamples, readExampleConfig, DEFAULT_EXAMPLE } from '../../src/cli/commands/demo.js';
import { runCli } from '../../src/cli/cli.js';
import type { CliIO } from '../../src/cli/io.js';

test('demo: every example has a server, a README and run flags hotpath run accepts', () => {
  const names = listExamples();
  assert.ok(names.includes(DEFAULT_EXAMPLE));
  assert.ok(names.length >= 7);
  for (const name of names) {
    assert.ok(existsSync(join(examplesDir, name, 'server.js')), name);
    assert.ok(existsSync(join(examplesDir, name, 'README.md')), name);
    const config = readExampleConfig(name);
    assert.ok(config.args.length > 0, name);
    if (config.setup) assert.ok(existsSync(join(examplesDir, name, config.setup)), `${name}: ${config.setup}`);
  }
});

test('demo: the run argv ends with the server command after --', () => {
  const argv = exampleRunArgv('express-pbkdf2-login', ['--json']);
  assert.deepEqual(argv.slice(-3), ['--', process.execPath, 'server.js']);
  assert.ok(argv.includes('--setup') && argv.includes('setup.json') && argv.includes('--json'));
});

test('demo: an unknown example is a usage error naming the choices', async () => {
  let err = '';
  const sink = new Writable({
    write(chunk, _enc, cb) {
      err += String(chunk);
      cb();
    },
  });
  const io: CliIO = { stdout: sink, stderr: sink, env: {}, cwd: process.cwd(), color: false, interactive: false };
  const code = await runCli(['demo', '--example', 'nope'], io, [demoCommand]);
  assert.equal(code, 2);
  assert.match(err, /HOTPATH_ERR_INVALID_OPTION/);
  assert.match(err, /restify-etag-leak/);
});

test('demo: the example can be named without --example, and two different names are a usage error', async () => {
  let err = '';
  const sink = new Writable({
    write(chunk, _enc, cb) {
      err += String(chunk);
      cb();
    },
  });
  const io: CliIO = { stdout: sink, stderr: sink, env: {}, cwd: process.cwd(), color: false, interactive: false };
  assert.equal(await runCli(['demo', 'nope'], io, [demoCommand]), 2);
  assert.match(err, /--example must be one of .*allocation-churn.*; got "nope"/);
  err = '';
  assert.equal(await runCli(['demo', 'allocation-churn', 'healthy-http'], io, [demoCommand]), 2);
  assert.match(err, /takes one example name/);
});

test('demo: runs while another server holds port 3000 (the examples listen where the system says)', { timeout: 60_000 }, async () => {
  const { createServer } = await import('node:http');
  const { mkdtempSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const holder = createServer();
  // Held by this test, or already by another server: either way the example cannot have it.
  await new Promise<void>((done) => holder.once('error', () => done()).listen(3000, '127.0.0.1', done));
  const out = mkdtempSync(join(tmpdir(), 'hotpath-demo-port-'));
  let err = '';
  const sink = new Writable({
    write(chunk, _enc, cb) {
      err += String(chunk);
      cb();
    },
  });
  const io: CliIO = { stdout: sink, stderr: sink, env: { ...process.env, PORT: '3000' }, cwd: out, color: false, interactive: false };
  try {
    const code = await runCli(['demo', 'healthy-http', '--out', out], io, [demoCommand]);
    assert.equal(code, 0, err);
    assert.doesNotMatch(err, /EADDRINUSE/);
    assert.match(err, /listens on 127\.0\.0\.1:(?!3000\b)\d+/);
  } finally {
    holder.close();
    rmSync(out, { recursive: true, force: true });
  }
});
