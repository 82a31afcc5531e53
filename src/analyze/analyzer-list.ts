// The list of analyzers, in no particular order (analyze-run.ts orders their findings).

import type { Analyzer } from './analyzer.js';
import { eventLoopBlocking } from './event-loop-blocking.js';
import { syncIo } from './sync-io.js';
import { gcPressure } from './gc-pressure.js';
import { memoryLeak } from './memory-leak.js';
import { listenerLeak } from './listener-leak.js';
import { handlerGrowth } from './handler-growth.js';
import { timerLeak } from './timer-leak.js';
import { ioWait } from './io-wait.js';
import { serialization } from './serialization.js';
import { connectionChurn } from './connection-churn.js';
import { outgoingChurn } from './outgoing-churn.js';
import { unansweredRequests } from './unanswered-requests.js';
import { latencyCreep } from './latency-creep.js';
import { loadGeneratorBound } from './load-generator-bound.js';
import { offLoopCpu } from './off-loop-cpu.js';
import { handleLeak } from './handle-leak.js';
import { loopYields } from './loop-yields.js';
import { eventLoopStuck } from './event-loop-stuck.js';
import { setupFailed } from './setup-failed.js';
import { socketWrites } from './socket-writes.js';
import { clusterPrimary } from './cluster-primary.js';
import { asyncStorageGrowth } from './async-storage-growth.js';
import { targetEnded } from './target-ended.js';

export const analyzers: readonly Analyzer[] = [
  eventLoopBlocking,
  loopYields,
  syncIo,
  gcPressure,
  memoryLeak,
  handleLeak,
  listenerLeak,
  handlerGrowth,
  timerLeak,
  ioWait,
  serialization,
  connectionChurn,
  outgoingChurn,
  unansweredRequests,
  offLoopCpu,
  latencyCreep,
  loadGeneratorBound,
  eventLoopStuck,
  setupFailed,
  socketWrites,
  clusterPrimary,
  asyncStorageGrowth,
  targetEnded,
];
