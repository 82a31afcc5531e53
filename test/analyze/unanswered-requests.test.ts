import { test } from 'node:test';
import assert from 'node:assert/strict';
import { unansweredRequests } from '../../src/analyze/unanswered-requests.js';
import { syntheticRun } from '../fixtures/telemetry/synthetic-run.js';
import { NOISE_LEVELS, SEEDS } from '../fixtures/telemetry/noise-levels.js';
import type { RunData } from '../../src/run-dir/run-data.js';

/** A run whose load saw `share` of its requests time out after `timeoutMs`. */
function withTimeouts(run: RunData, share: number, timeoutMs = 2000): RunData {
  const load = run.load!;
  const timeouts = Math.round(load.requests.total * share);
  load.errors = { ...load.errors, total: load.errors.total + timeouts, timeouts };
  load.requests = { ...load.requests, sent: load.requests.total + timeouts };
  load.options = { ...load.options, timeoutMs };
  return run;
}

for (const noise of NOISE_LEVELS) {
  test(`unanswered: 2 % of requests time out while the rest answer in ms (noise ${noise})`, () => {
    for (const seed of SEEDS) {
      const [f] = unansweredRequests(withTimeouts(syntheticRun({ seed, noise, rps: 500, latencyMs: 1 }), 0.02));
      assert.ok(f, `seed ${seed}`);
      assert.equal(f.category, 'unanswered-requests');
      assert.equal(f.severity, 'critical');
      assert.ok(Math.abs((f.evidence.unansweredShare as number) - 0.02) < 0.002);
      assert.match(f.summary, /left hanging, not slow/);
      assert.match(f.recommendation, /res\.end\(\)/);
    }
  });
}

test('unanswered: two in a thousand is a warning; none, or fewer than three, is nothing', () => {
  assert.equal(unansweredRequests(withTimeouts(syntheticRun({ seed: 1, rps: 2000, latencyMs: 1 }), 0.002))[0]?.severity, 'warning');
  assert.deepEqual(unansweredRequests(syntheticRun({ seed: 1, rps: 2000, latencyMs: 1 })), []);
  assert.deepEqual(unansweredRequests(withTimeouts(syntheticRun({ seed: 1, rps: 20, durationS: 5, latencyMs: 1 }), 0.02)), []);
});

test('unanswered: timeouts at the tail of a slow server are slowness, not hanging', () => {
  // Answered requests take ~900 ms at p99 against a 2 s timeout: the timeouts are its tail.
  const run = withTimeouts(syntheticRun({ seed: 1, rps: 50, latencyMs: 300, latencyP99Factor: 3 }), 0.05);
  assert.deepEqual(unansweredRequests(run), []);
});

test('unanswered: before any times out, every connection stuck on a hung request stops the responses while the loop idles', () => {
  const run = syntheticRun({ seed: 1, durationS: 8, rps: (p) => (p < 0.3 ? 800 : 0), elu: (p) => (p < 0.3 ? 0.6 : 0.62), cores: (p) => (p < 0.3 ? 0.6 : 0.02), latencyMs: 1 });
  run.load!.requests = { ...run.load!.requests, inFlightAtEnd: run.load!.options.connections };
  const [f] = unansweredRequests(run);
  assert.ok(f, JSON.stringify(run.load!.timeline.map((p) => p.requests)));
  assert.equal(f.severity, 'critical');
  assert.equal(f.evidence.waitingAtEnd, run.load!.options.connections);
  assert.ok((f.evidence.silentSeconds as number) >= 2);
  assert.ok((f.evidence.tailBusy as number) < 0.1, 'idle by its CPU, whatever ELU read');
  assert.match(f.summary, /Responses stopped after \d+ s/);
  // A loop blocked at the end (busy, not idle) is a stall, not hanging requests.
  const blocked = syntheticRun({ seed: 1, durationS: 8, rps: (p) => (p < 0.3 ? 800 : 0), elu: 1, cores: 1, latencyMs: 1 });
  blocked.load!.requests = { ...blocked.load!.requests, inFlightAtEnd: blocked.load!.options.connections };
  assert.deepEqual(unansweredRequests(blocked), []);
});

test('unanswered: hung requests waiting on outgoing calls that never end name the calling function, and sockets held by unread responses', () => {
  const checkStock = { function: 'checkStock', file: '/srv/app/lib/inventory.js', line: 8, column: 5 };
  const make = (queuedShare: number | undefined) => {
    const run = syntheticRun({ seed: 1, cwd: '/srv/app', durationS: 8, rps: (p) => (p < 0.3 ? 800 : 0), elu: (p) => (p < 0.3 ? 0.6 : 0.62), cores: (p) => (p < 0.3 ? 0.6 : 0.02), latencyMs: 1,
      outgoing: [{ api: 'http', origin: '127.0.0.1:4100', perRequest: 1, msEach: 2, site: checkStock, maxSockets: 10, ...(queuedShare !== undefined ? { queuedShare } : {}) }] });
    const connections = run.load!.options.connections;
    run.load!.requests = { ...run.load!.requests, inFlightAtEnd: connections };
    // The last report: as many calls as hung requests started and never answered.
    const last = run.threads[0].growth.at(-1)!.outgoing![0];
    last.count = last.completed + connections;
    if (queuedShare !== undefined) last.queued = connections;
    return run;
  };
  const [f] = unansweredRequests(make(1));
  assert.equal(f.culprit?.function, 'checkStock');
  assert.equal(f.culprit?.file, 'lib/inventory.js');
  assert.equal(f.evidence.pendingCalls, make(1).load!.options.connections);
  assert.equal(f.evidence.maxSockets, 10);
  assert.match(f.summary, /still waiting for a response at the end .*queued in their http\.Agent behind its 10 sockets/);
  assert.match(f.recommendation, /res\.resume\(\)/);
  // Not queued: the upstream never answered; the advice is a timeout.
  const [g] = unansweredRequests(make(undefined));
  assert.equal(g.culprit?.function, 'checkStock');
  assert.match(g.recommendation, /AbortSignal\.timeout/);
  assert.doesNotMatch(g.recommendation, /res\.resume/);
});
