// The part of each function's attributed time that is the cost of answering a request, not
// work the function chose to do: Node's HTTP, socket and stream machinery, and work inside
// the web framework that called the function (Express's res.json → send → etag hashing,
// restify's res.send). Every handler pays it once per response, so on a cheap route it is
// most of the handler's attributed time: a healthy Express `res.json` handler carried 55 % of
// the CPU, 33 % sockets, 31 % HTTP, 18 % express. A framework is recognised as a package
// that is on the stack above the function (it dispatched the request to it) and again below
// it (the function called back into it), with no list of names.

import type { CallTree, WorkKind } from './call-tree.js';
import { appOwners, chargedTo } from './attribution.js';
import { nodeWork } from './work-breakdown.js';
import { dependencyName } from './work-kind.js';

/** Work kinds that are Node's own answering of a request: writing the response to the socket. */
const ANSWERING: ReadonlySet<WorkKind> = new Set(['http', 'net', 'stream']);

/** Per frame index, the attributed self time (the tree's unit) that is response pipeline work. */
export function pipelineTime(tree: CallTree, owner: Int32Array = appOwners(tree)): Float64Array {
  const n = tree.frame.length;
  const to = chargedTo(tree, owner);
  const work = nodeWork(tree);
  const packageOf = tree.frames.map((f) => (f.kind === 'deps' ? dependencyName(f.file) : undefined));
  const callers = new Map<number, Set<string>>();
  // Whether a frame of a package that called the node's app owner lies between the owner and the node.
  const viaFramework = new Uint8Array(n);
  const out = new Float64Array(tree.frames.length);
  // JSON a framework's frame runs on its own lines (Express's stringify in res.json) is the payload's.
  const inlineJson = new Float64Array(n);
  for (const e of tree.inlineWork ?? []) if (e.work === 'json') inlineJson[e.node] += e.us;
  for (let i = 1; i < n; i++) {
    const a = owner[i];
    if (a < 0 || a === i) continue;
    const p = tree.parent[i];
    const pkg = packageOf[tree.frame[i]];
    viaFramework[i] =
      (p !== a && viaFramework[p] === 1) || (pkg !== undefined && callerPackages(tree, a, packageOf, callers).has(pkg)) ? 1 : 0;
    if (to[i] !== a || tree.self[i] <= 0) continue;
    const kind = work[i].work;
    // The payload the framework serializes is the function's choice: its JSON work stays its own.
    if (ANSWERING.has(kind)) out[tree.frame[a]] += tree.self[i];
    else if (viaFramework[i] === 1 && kind !== 'json') out[tree.frame[a]] += tree.self[i] - inlineJson[i];
  }
  return out;
}

/** The dependency packages on the stack above an app node (memoized per node). */
function callerPackages(tree: CallTree, node: number, packageOf: (string | undefined)[], memo: Map<number, Set<string>>): Set<string> {
  let set = memo.get(node);
  if (set === undefined) {
    set = new Set();
    for (let i = tree.parent[node]; i > 0; i = tree.parent[i]) {
      const pkg = packageOf[tree.frame[i]];
      if (pkg !== undefined) set.add(pkg);
    }
    memo.set(node, set);
  }
  return set;
}
