// V8's own code a JS function runs through, as perf names it (`hotpath run --native`,
// `hotpath import`): its builtins (`Builtins_LoadIC`, `Builtins_CEntry_...`) and the runtime they
// call (`v8::internal::Runtime_DateCurrentTime`, and what that calls: the clock, the allocator).
// The inspector's profile never shows these frames: it counts their time as the calling
// function's own, on the line of the call. Not the function's own code: the garbage collector
// (the inspector's own node), and a C++ binding entered through an API callback (node's
// `writeSync`, zlib: the inspector names the binding).

import type { CallTree } from './call-tree.js';

const engine = /^(Builtins_|v8::internal::|v8::(?!internal::)\w)/;
const collector =
  /^v8::internal::(Heap::|Scavenge|Scavenger|MinorM|MarkCompact|MarkingVisitor|MainMarkingVisitor|IncrementalMarking|ConcurrentMarking|Sweeper|GCTracer|ArrayBufferSweeper)/;
const apiCall =
  /^(Builtins_CallApiCallback|Builtins_CallFunctionTemplate|v8::internal::Builtin_HandleApiCall|v8::internal::FunctionCallbackArguments::Call)/;

/** True for a frame of V8's builtins or runtime that is not the garbage collector. */
export function isV8EngineFrame(name: string): boolean {
  return engine.test(name) && !collector.test(name);
}

const nativeKind = (kind: string) => kind === 'native' || kind === 'kernel';

/**
 * The self weight of `frameIndex`'s nodes in `tree`, and of the native frames it reached through
 * V8's builtins and runtime (entered by an engine frame, no GC or API callback on the way): the
 * function's own code as the inspector counts it.
 */
export function ownCodeWeight(tree: CallTree, frameIndex: number): number {
  let own = 0;
  for (let i = 1; i < tree.frame.length; i++) {
    if (tree.self[i] === 0) continue;
    let n = i;
    let below = -1;
    while (n > 0 && tree.frame[n] !== frameIndex) {
      const f = tree.frames[tree.frame[n]];
      if (!nativeKind(f.kind) || collector.test(f.name) || apiCall.test(f.name)) break;
      below = n;
      n = tree.parent[n];
    }
    if (n > 0 && tree.frame[n] === frameIndex && (below < 0 || isV8EngineFrame(tree.frames[tree.frame[below]].name))) own += tree.self[i];
  }
  return own;
}
