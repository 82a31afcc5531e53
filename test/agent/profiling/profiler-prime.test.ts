import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Session } from 'node:inspector';
import { Worker } from 'node:worker_threads';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ProfilerPrime } from '../../../src/agent/profiling/profiler-prime.js';

function connect(sessions: Session[]): () => Session {
  return () => {
    const s = new Session();
    s.connect();
    sessions.push(s);
    return s;
  };
}

const post = (s: Session, method: string, params: object = {}): Promise<unknown> =>
  new Promise((resolve, reject) => s.post(method, params, (err, result) => (err ? reject(err) : resolve(result))));

test('profiler prime: one profile started and stopped in its own session, then disconnected; a later profile starts as usual', async () => {
  const sessions: Session[] = [];
  const errors: string[] = [];
  const busy: boolean[] = [];
  let ended!: () => void;
  const done = new Promise<void>((r) => (ended = r));
  const prime = new ProfilerPrime(
    connect(sessions),
    10_000,
    (what, err) => errors.push(`${what}: ${String(err)}`),
    (b) => {
      busy.push(b);
      if (!b) ended();
    },
  );
  prime.start();
  await done;
  assert.equal(sessions.length, 1);
  assert.deepEqual(busy, [true, false]);
  assert.equal(prime.busy, false);
  assert.deepEqual(errors, []);
  // Its session is gone: posting to it fails, and a new session profiles normally.
  assert.throws(() => sessions[0].post('Profiler.enable'));
  const s = new Session();
  s.connect();
  try {
    await post(s, 'Profiler.enable');
    await post(s, 'Profiler.start');
    const { profile } = (await post(s, 'Profiler.stop')) as { profile: { nodes: unknown[] } };
    assert.ok(profile.nodes.length > 0);
  } finally {
    s.disconnect();
  }
});

// From a worker, as the agent worker does (connectToMainThread): V8's answers reach the worker
// through its event loop, so none has come when it cancels right after starting.
const CANCELLING_WORKER = `
const { workerData, parentPort } = require('node:worker_threads');
const { Session } = require('node:inspector');
import(workerData.url).then(({ ProfilerPrime }) => {
  const busy = [];
  const errors = [];
  const prime = new ProfilerPrime(() => { const s = new Session(); s.connectToMainThread(); return s; }, 10000,
    (what, err) => errors.push(what + ': ' + String(err)), (b) => busy.push(b));
  prime.start();
  const busyAtStart = prime.busy;
  prime.cancel();
  prime.cancel();
  // Answers that still come go to a disconnected session: nothing more is reported.
  setTimeout(() => parentPort.postMessage({ busy, busyAtStart, after: prime.busy, errors }), 200);
});
`;

test('profiler prime: cancelled (the process exits) before V8 answered, it disconnects and ends once', async () => {
  const url = pathToFileURL(fileURLToPath(new URL('../../../src/agent/profiling/profiler-prime.js', import.meta.url))).href;
  const worker = new Worker(CANCELLING_WORKER, { eval: true, workerData: { url } });
  try {
    const r = await new Promise<{ busy: boolean[]; busyAtStart: boolean; after: boolean; errors: string[] }>((resolve) =>
      worker.once('message', resolve),
    );
    assert.equal(r.busyAtStart, true);
    assert.deepEqual(r.busy, [true, false]);
    assert.equal(r.after, false);
    assert.deepEqual(r.errors, []);
  } finally {
    await worker.terminate();
  }
});

test('profiler prime: a session that cannot connect is an error, not a throw, and nothing is busy', () => {
  const errors: string[] = [];
  const busy: boolean[] = [];
  const prime = new ProfilerPrime(
    () => {
      throw new Error('no inspector');
    },
    10_000,
    (what, err) => errors.push(`${what}: ${(err as Error).message}`),
    (b) => busy.push(b),
  );
  prime.start();
  assert.deepEqual(errors, ['profiler-prime: no inspector']);
  assert.deepEqual(busy, []);
  assert.equal(prime.busy, false);
});
