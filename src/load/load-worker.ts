// Entry point of a load worker thread: wires the parent port to one WorkerEngine.

import { parentPort, workerData } from 'node:worker_threads';
import { WorkerEngine } from './worker-engine.js';
import type { MainToWorker, WorkerConfig } from './worker-protocol.js';

const port = parentPort;
if (port === null) throw new Error('load-worker.js must run in a worker thread');

const engine = new WorkerEngine(workerData as WorkerConfig, (msg) => port.postMessage(msg));
port.on('message', (msg: MainToWorker) => {
  try {
    if (msg.type === 'run') engine.run(msg.measure);
    else if (msg.type === 'measure') engine.measure();
    else if (msg.type === 'stop') engine.stop();
  } catch (err) {
    port.postMessage({ type: 'fatal', message: err instanceof Error ? (err.stack ?? err.message) : String(err) });
  }
});
port.postMessage({ type: 'ready' });
