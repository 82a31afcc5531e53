// Message waits in a real process: questions sent to a forked child over IPC and posted to a
// worker thread while a request is in flight are timed from the send to the answering message, at
// the app line that sent them; the questions asked at start-up, outside any request, are not.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AgentMessage, GrowthMessage } from '../../../src/agent/protocol.js';
import { getMany, FIXTURES, agentLauncher } from '../helpers/agent-harness.js';

const startWith = agentLauncher();
const FIXTURE = 'message-helpers.cjs';

function markerLine(name: string): number {
  const lines = readFileSync(join(FIXTURES, FIXTURE), 'utf8').split('\n');
  const i = lines.findIndex((l) => l.includes(`@site:${name}`));
  assert.ok(i >= 0, `marker ${name}`);
  return i + 1;
}

test('message waits: IPC sends to a child and posts to a worker are each timed to their answer, at the sending line', async () => {
  const { c, port } = await startWith([FIXTURE]);
  await getMany(port, '/child', 4, 1);
  await getMany(port, '/worker', 4, 1);
  const g = await c.waitFor(
    (m: AgentMessage): m is GrowthMessage => m.type === 'growth' && (m.messageWaits ?? []).filter((w) => w.completed >= 12).length >= 2,
    10_000,
    'message waits',
  );
  const waits = g.messageWaits!;
  assert.equal(waits.length, 2, JSON.stringify(waits));
  const byTarget = new Map(waits.map((w) => [w.target, w]));
  const child = byTarget.get(`child process ${FIXTURE}`);
  const worker = byTarget.get('worker thread');
  assert.ok(child && worker, JSON.stringify([...byTarget.keys()]));
  for (const [w, marker] of [
    [child, 'child'],
    [worker, 'worker'],
  ] as const) {
    // Four requests, three questions each; the start-up questions are not counted.
    assert.equal(w.count, 12, JSON.stringify(w));
    assert.equal(w.completed, 12);
    // Each answer comes after the helper's 10 ms timer, one question waiting at a time.
    assert.ok(w.totalMs >= 12 * 9.5, `${w.totalMs} ms`);
    assert.equal(w.concurrencyMs!.length, 2, JSON.stringify(w.concurrencyMs));
    assert.ok(w.site?.file.endsWith(`/fixtures/agent/${FIXTURE}`), w.site?.file);
    assert.equal(w.site!.line, markerLine(marker));
  }
});
