// The stall watchdog on a heartbeat this test writes itself: a missed heartbeat is reported
// while it lasts and then with its duration; one that overlaps the agent's own work on the
// main thread (stopping profiles) is marked byAgent.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { StallWatchdog } from '../../../src/agent/worker/stall-watchdog.js';
import { epochNow } from '../../../src/agent/clock.js';
import type { StallMessage } from '../../../src/agent/protocol.js';

type Body = Omit<StallMessage, 'v' | 'pid' | 'threadId' | 't'>;

async function missBeats(blockMs: number, during?: (dog: StallWatchdog) => void): Promise<Body[]> {
  const heartbeat = new SharedArrayBuffer(8);
  const beat = new Float64Array(heartbeat);
  const sent: Body[] = [];
  const dog = new StallWatchdog(heartbeat, (b) => sent.push(b));
  dog.start();
  try {
    for (let i = 0; i < 3; i++) {
      beat[0] = epochNow();
      await sleep(50);
    }
    during?.(dog);
    await sleep(blockMs);
    // One beat ends the block (the watchdog reads only the latest beat, so more beats would move
    // the end it sees); stop as soon as the final report is out, before the silence after this
    // beat could pass for a second stall on a slow machine.
    beat[0] = epochNow();
    for (const end = Date.now() + 3000; Date.now() < end && !sent.some((b) => !b.ongoing);) await sleep(10);
  } finally {
    dog.stop();
  }
  return sent;
}

test('a missed heartbeat: ongoing reports, then the final duration, not the agent\'s', async () => {
  const sent = await missBeats(700);
  assert.ok(sent.some((b) => b.ongoing), 'reported while it lasted');
  const final = sent.find((b) => !b.ongoing);
  assert.ok(final && final.durationMs >= 650 && final.durationMs < 1500, JSON.stringify(sent));
  assert.ok(sent.every((b) => b.byAgent === undefined));
});

test('a block while the agent stops its profiles is marked byAgent, ongoing and final', async () => {
  const sent = await missBeats(700, (dog) => {
    dog.agentWork(true);
    setTimeout(() => dog.agentWork(false), 600);
  });
  assert.ok(sent.length >= 2 && sent.some((b) => !b.ongoing), JSON.stringify(sent));
  assert.ok(sent.every((b) => b.byAgent === 'profile-stop'), JSON.stringify(sent));
});

test('agent work that ended before the block began does not mark it', async () => {
  const sent = await missBeats(700, (dog) => {
    dog.agentWork(true);
    dog.agentWork(false);
  });
  const final = sent.find((b) => !b.ongoing);
  assert.ok(final, JSON.stringify(sent));
  assert.equal(final.byAgent, undefined);
});
