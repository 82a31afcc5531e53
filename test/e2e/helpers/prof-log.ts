// Records a real V8 tick log: starts a server under `node --prof` in a fresh directory,
// drives load at it on 127.0.0.1 with hotpath's load engine, asks it to quit (so V8 flushes
// the log) and returns the log's path.

import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { load } from '../../../src/load/load.js';

export interface RecordedLog {
  dir: string;
  log: string;
  requests: number;
}

export async function recordTickLog(
  server: string,
  seconds: number,
  node = process.execPath,
  extraFlags: string[] = [],
): Promise<RecordedLog> {
  const dir = mkdtempSync(join(tmpdir(), 'hotpath-prof-'));
  const child = spawn(node, ['--prof', ...extraFlags, server], {
    cwd: dir,
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, PORT: '0', NODE_OPTIONS: '' },
  });
  let out = '';
  const port = await new Promise<number>((ok, fail) => {
    child.stdout.on('data', (c: Buffer) => {
      out += String(c);
      const m = /listening (\d+)/.exec(out);
      if (m) ok(Number(m[1]));
    });
    child.once('exit', (code) => fail(new Error(`the server exited (${code}) before listening: ${out}`)));
  });
  const result = await load({ url: `http://127.0.0.1:${port}/`, duration: seconds, connections: 4 });
  const exited = once(child, 'exit');
  await fetch(`http://127.0.0.1:${port}/quit`).catch(() => undefined);
  const timer = setTimeout(() => child.kill('SIGTERM'), 5000);
  await exited;
  clearTimeout(timer);
  const log = readdirSync(dir).find((f) => /^isolate-.*-v8\.log$/.test(f));
  if (!log) throw new Error(`no tick log in ${dir}`);
  return { dir, log: join(dir, log), requests: result.requests.total };
}
