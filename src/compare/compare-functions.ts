// Per function: attributed self and total CPU time per completed request, before and after,
// from each run's CPU view (the busiest target thread over the load window, the same one the
// diagnosis reads). Per request, not per second: a faster server does more work per second.
// Functions are matched by name and file (a fix moves lines); app code first, then by change.

import type { CpuView } from '../analyze/signals/cpu-view.js';
import type { FunctionChange } from '../report/compare-schema.js';

/** A function present in one run only is listed when it took at least this share of that run's CPU. */
export const APPEARED_MIN_SHARE = 0.005;
/** Rows kept (the long tail is noise). */
export const FUNCTION_ROWS = 60;

interface PerRequest {
  function: string;
  file: string;
  kind: string;
  selfUs: number;
  totalUs: number;
  share: number;
}

function perRequest(view: CpuView, requests: number): Map<string, PerRequest> {
  const out = new Map<string, PerRequest>();
  for (const f of view.functions) {
    // hotpath's own agent code is its overhead, not the app's (as in report.json's hotspots).
    if (f.frame.kind === 'agent') continue;
    const key = `${f.frame.name}\u0000${f.frame.file}`;
    const row = out.get(key) ?? { function: f.frame.name, file: f.frame.file, kind: f.frame.kind, selfUs: 0, totalUs: 0, share: 0 };
    row.selfUs += f.selfUs / requests;
    row.totalUs = Math.max(row.totalUs, f.totalUs / requests);
    row.share += view.activeUs > 0 ? f.selfUs / view.activeUs : 0;
    out.set(key, row);
  }
  return out;
}

export function compareFunctions(before: CpuView, beforeRequests: number, after: CpuView, afterRequests: number): FunctionChange[] {
  const b = perRequest(before, Math.max(1, beforeRequests));
  const a = perRequest(after, Math.max(1, afterRequests));
  const rows: FunctionChange[] = [];
  for (const key of new Set([...b.keys(), ...a.keys()])) {
    const x = b.get(key);
    const y = a.get(key);
    if (!x && y && y.share < APPEARED_MIN_SHARE) continue;
    if (x && !y && x.share < APPEARED_MIN_SHARE) continue;
    const id = (x ?? y)!;
    rows.push({
      function: id.function,
      file: id.file,
      kind: id.kind,
      selfBeforeUs: x?.selfUs ?? 0,
      selfAfterUs: y?.selfUs ?? 0,
      totalBeforeUs: x?.totalUs ?? 0,
      totalAfterUs: y?.totalUs ?? 0,
      selfChangeUs: (y?.selfUs ?? 0) - (x?.selfUs ?? 0),
      status: !x ? 'appeared' : !y ? 'vanished' : 'changed',
    });
  }
  rows.sort((p, q) => Number(q.kind === 'app') - Number(p.kind === 'app') || Math.abs(q.selfChangeUs) - Math.abs(p.selfChangeUs));
  return rows.slice(0, FUNCTION_ROWS);
}
