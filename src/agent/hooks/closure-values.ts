// What a framework keeps out of reach of the agent's patches, read from the closures of the
// functions it hands out: V8's `[[Scopes]]` of a function, through an in-thread inspector
// session (which answers synchronously). This is how the agent reaches the inside of a
// framework loaded as ES modules (no require.cache, bindings that cannot be replaced: the
// classes they hold can still be patched) and the copies a framework composes once (koa-compose's
// middleware array behind koa-mount). Used once per function, when a server listens or an app
// takes its first request, never per request.
import type { Session } from 'node:inspector';

const KEY = 'hotpath.closure-values';
const GROUP = 'hotpath-closure-values';

/** `closure`: the function's own closures and blocks; `module`: the ES module it was defined in. */
export type ScopeKind = 'closure' | 'module';

interface RemoteObject {
  type?: string;
  value?: unknown;
  objectId?: string;
  description?: string;
}
interface PropertyList {
  result?: { name: string; value?: RemoteObject }[];
  internalProperties?: { name: string; value?: RemoteObject }[];
}

function kindOf(description: string | undefined): ScopeKind | undefined {
  if (description === undefined) return undefined;
  if (description.startsWith('Closure') || description.startsWith('Block') || description.startsWith('Catch')) return 'closure';
  if (description.startsWith('Module')) return 'module';
  return undefined;
}

/**
 * The values `fn`'s scopes of the given kinds hold under `names` (the innermost scope's first),
 * as JavaScript values; a name not found is absent. Empty when the inspector cannot tell (no
 * inspector, a native function).
 */
export function closureValues(fn: Function, names: readonly string[], kinds: readonly ScopeKind[] = ['closure']): Map<string, unknown> {
  const out = new Map<string, unknown>();
  const g = globalThis as Record<symbol, unknown>;
  const key = Symbol.for(KEY);
  let session: Session | undefined;
  try {
    // getBuiltinModule where there is one (ESM callers have no `require`), else the bundle's require.
    const inspector = (process.getBuiltinModule?.('node:inspector') ?? require('node:inspector')) as typeof import('node:inspector');
    session = new inspector.Session();
    session.connect();
    const s = session;
    const post = <T>(method: string, params: object): T | undefined => {
      let answer: T | undefined;
      s.post(method, params, (err, res) => {
        if (!err) answer = res as T;
      });
      return answer;
    };
    const properties = (objectId: string | undefined): PropertyList =>
      objectId === undefined ? {} : (post<PropertyList>('Runtime.getProperties', { objectId, ownProperties: true }) ?? {});
    const fetch = `globalThis[Symbol.for(${JSON.stringify(KEY)})]`;
    g[key] = fn;
    const fnId = post<{ result?: RemoteObject }>('Runtime.evaluate', { expression: fetch, objectGroup: GROUP })?.result?.objectId;
    delete g[key];
    const scopesId = properties(fnId).internalProperties?.find((p) => p.name === '[[Scopes]]')?.value?.objectId;
    for (const scope of properties(scopesId).result ?? []) {
      const kind = kindOf(scope.value?.description);
      if (kind === undefined || !kinds.includes(kind)) continue;
      for (const v of properties(scope.value?.objectId).result ?? []) {
        if (!names.includes(v.name) || out.has(v.name) || v.value === undefined) continue;
        if (v.value.objectId === undefined) {
          if (v.value.type !== 'undefined') out.set(v.name, v.value.value);
          continue;
        }
        post('Runtime.callFunctionOn', {
          objectId: v.value.objectId,
          functionDeclaration: `function () { ${fetch} = this; }`,
          objectGroup: GROUP,
        });
        if (Object.prototype.hasOwnProperty.call(g, key)) out.set(v.name, g[key]);
        delete g[key];
      }
    }
  } catch {
    // No inspector (built without it) or a session refused: nothing known.
  } finally {
    delete g[key];
    try {
      session?.post('Runtime.releaseObjectGroup', { objectGroup: GROUP });
      session?.disconnect();
    } catch {
      /* already */
    }
  }
  return out;
}
