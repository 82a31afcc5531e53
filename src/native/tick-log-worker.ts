// Worker thread entry of `hotpath prof` with several isolate logs: reads, resolves and
// converts one log (prof-run.ts starts one worker per log) and posts the result back.

import { parentPort, workerData } from 'node:worker_threads';
import { analyzeTickLog } from './analyze-tick-log.js';

const { file, profile } = workerData as { file: string; profile: boolean };
analyzeTickLog(file, { profile }).then(
  (result) => parentPort?.postMessage({ result }),
  (err: unknown) => {
    const e = err as { code?: string; message?: string; details?: unknown };
    parentPort?.postMessage({ error: { code: e.code, message: e.message ?? String(err), details: e.details } });
  },
);
