// Where V8 says a function is defined: its `[[FunctionLocation]]` internal property, read
// through an in-thread inspector session (Runtime.evaluate on a symbol-keyed global, then
// Runtime.getProperties). An in-thread session answers synchronously. Used rarely and off the
// request path (a request left unanswered, seen once its connection closes), once per function.
import type { Session } from 'node:inspector';

export interface FunctionLocation {
  scriptId: string;
  line: number;
  column: number;
}

const KEY = 'hotpath.function-location';
const cache = new WeakMap<object, FunctionLocation | null>();

/** 1-based line and column (a bound function's target's), or undefined when V8 cannot tell (a native function, no inspector). */
export function functionLocation(fn: (...args: never[]) => unknown): FunctionLocation | undefined {
  const known = cache.get(fn);
  if (known !== undefined) return known ?? undefined;
  let found: FunctionLocation | null = null;
  let session: Session | undefined;
  const g = globalThis as Record<symbol, unknown>;
  const key = Symbol.for(KEY);
  try {
    // getBuiltinModule where there is one (ESM callers have no `require`), else the bundle's require.
    const inspector = (process.getBuiltinModule?.('node:inspector') ?? require('node:inspector')) as typeof import('node:inspector');
    session = new inspector.Session();
    session.connect();
    const s = session;
    g[key] = fn;
    s.post('Runtime.evaluate', { expression: `globalThis[Symbol.for(${JSON.stringify(KEY)})]` }, (err, res) => {
      const objectId = res?.result?.objectId;
      if (err || objectId === undefined) return;
      // A bound function (Fastify binds route handlers to its instance) has no location of its own: its target's.
      const locate = (id: string, depth: number): void =>
        s.post('Runtime.getProperties', { objectId: id, ownProperties: true }, (err2, props) => {
          const internal = props?.internalProperties ?? [];
          const loc = internal.find((p) => p.name === '[[FunctionLocation]]')?.value?.value as
            { scriptId?: string; lineNumber?: number; columnNumber?: number } | undefined;
          const target = internal.find((p) => p.name === '[[TargetFunction]]')?.value?.objectId;
          if (err2) return;
          if (loc?.scriptId !== undefined && loc.lineNumber !== undefined)
            found = { scriptId: String(loc.scriptId), line: loc.lineNumber + 1, column: (loc.columnNumber ?? 0) + 1 };
          else if (target !== undefined && depth < 4) locate(target, depth + 1);
        });
      locate(objectId, 0);
      s.post('Runtime.releaseObject', { objectId }, () => {});
    });
  } catch {
    // No inspector (built without it) or a session refused: no location.
  } finally {
    delete g[key];
    try {
      session?.disconnect();
    } catch {
      /* already */
    }
  }
  cache.set(fn, found);
  return found ?? undefined;
}
