// The agent's spare descriptor (src/agent/fd-reserve.ts), in a real process whose descriptor
// limit is lowered (`ulimit -n`) and used up: a plain write fails with EMFILE, the agent's writes
// and reads still succeed, one after another, and the spare is taken again after each.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const module = pathToFileURL(fileURLToPath(new URL('../../src/agent/fd-reserve.js', import.meta.url))).href;

const child = `
const { reserveFd, writeFileSpared, withSpareFd } = await import(${JSON.stringify(module)});
const fs = await import('node:fs');
const dir = process.argv[1];
reserveFd();
const held = [];
for (;;) {
  try { held.push(fs.openSync('/dev/null', 'r')); } catch (err) { if (err.code !== 'EMFILE') throw err; break; }
}
const plain = await new Promise((r) => fs.writeFile(dir + '/plain.json', 'x', (err) => r(err?.code ?? 'ok')));
const spared = [];
for (const name of ['cpu.json', 'heap.json']) {
  spared.push(await new Promise((r) => writeFileSpared(dir + '/' + name, '{"' + name + '":1}', (err) => r(err?.code ?? 'ok'))));
}
let read;
try { read = withSpareFd(() => fs.readFileSync(dir + '/cpu.json', 'utf8')); } catch (err) { read = err.code; }
let other;
try { withSpareFd(() => { throw Object.assign(new Error('no'), { code: 'ENOENT' }); }); } catch (err) { other = err.code; }
process.stdout.write(JSON.stringify({ held: held.length, plain, spared, read, other }));
`;

test('the spare descriptor: once the process is out of descriptors, the agent still writes its files and reads a script, one after another', () => {
  const dir = mkdtempSync(join(tmpdir(), 'hotpath-fd-'));
  try {
    const out = execFileSync('bash', ['-c', `ulimit -n 64 && exec "${process.execPath}" --input-type=module -e "$0" "$1"`, child, dir], {
      encoding: 'utf8',
    });
    const r = JSON.parse(out) as { held: number; plain: string; spared: string[]; read: string; other: string };
    assert.ok(r.held > 10, `the child opened ${r.held} descriptors before the limit`);
    assert.equal(r.plain, 'EMFILE', 'a plain write fails: the limit is reached');
    assert.deepEqual(r.spared, ['ok', 'ok'], 'both of the agent writes succeed, the spare taken again between them');
    assert.equal(readFileSync(join(dir, 'heap.json'), 'utf8'), '{"heap.json":1}');
    assert.equal(r.read, '{"cpu.json":1}', 'a read succeeds too');
    assert.equal(r.other, 'ENOENT', 'other failures are not retried, and pass through');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
