import { test } from 'node:test';
import assert from 'node:assert/strict';
import { load } from '../../src/load/load.js';
import { httpServer } from './helpers/servers.js';

/** Blocks the server's event loop, like a synchronous call would. */
function busyWait(ms: number): void {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    /* stall */
  }
}

test('a 2 s stall shows in the corrected high percentiles of an open-model run, not in the service time', async () => {
  let firstAt = 0;
  let stalled = false;
  const s = await httpServer((_req, res) => {
    if (firstAt === 0) firstAt = Date.now();
    if (!stalled && Date.now() - firstAt > 1000) {
      stalled = true;
      busyWait(2000);
    }
    res.end('ok');
  });
  try {
    const r = await load({ url: s.url, rate: 200, duration: 4, connections: 2, workers: 1 });
    assert.equal(r.model, 'open');
    assert.ok(stalled, 'the server stalled');
    assert.ok(r.serviceTime !== undefined);
    // About 400 planned sends fell into the 2 s stall: ~12% of the run waited 0..2 s.
    assert.ok(r.latency.p99 > 1000, `corrected p99 ${r.latency.p99} ms`);
    assert.ok(r.latency.max > 1500, `corrected max ${r.latency.max} ms`);
    assert.ok(r.serviceTime.p99 < r.latency.p99 / 2, `service p99 ${r.serviceTime.p99} ms vs corrected ${r.latency.p99} ms`);
    const sch = r.schedule;
    assert.ok(sch !== undefined);
    assert.ok(sch.intended >= 720 && sch.intended <= 880, `intended ${sch.intended}`); // 200/s × 4 s, give or take message delays on a busy machine
    assert.ok(sch.late > 100, `late ${sch.late}`);
    assert.ok(sch.dropped <= 2, `dropped ${sch.dropped}`); // at most the sends due in the last timer tick
    // Never silently fewer: every planned send was made.
    assert.ok(r.requests.sent >= sch.intended - 2, `sent ${r.requests.sent} of ${sch.intended}`);
  } finally {
    await s.close();
  }
});

test('the open model holds the planned rate across workers and accounts for every send', async () => {
  const s = await httpServer((_req, res) => res.end('ok'));
  try {
    const r = await load({ url: s.url, rate: 400, duration: 1.5, connections: 4, workers: 2 });
    const sch = r.schedule;
    assert.ok(sch !== undefined);
    assert.ok(sch.intended >= 540 && sch.intended <= 660, `intended ${sch.intended}`); // 400/s × 1.5 s
    assert.equal(r.requests.sent + sch.dropped >= sch.intended - 2, true);
    assert.equal(r.requests.total + r.requests.inFlightAtEnd, r.requests.sent);
    assert.equal(s.requests >= r.requests.total, true);
    assert.equal(r.latency.count, r.requests.total);
    assert.equal(r.serviceTime?.count, r.requests.total);
  } finally {
    await s.close();
  }
});

test('an exact amount in the open model sends exactly that many', async () => {
  const s = await httpServer((_req, res) => res.end('ok'));
  try {
    const r = await load({ url: s.url, rate: 1000, amount: 300, connections: 3, workers: 1 });
    assert.equal(r.requests.total, 300);
    assert.equal(s.requests, 300);
    assert.equal(r.schedule?.dropped, 0);
  } finally {
    await s.close();
  }
});
