// Advice for gc-pressure findings (Markdown).

export const allocationAdvice = (site?: string) => [
  site ? `Allocate less in ${site}:` : 'Allocate less on the request path:',
  'reuse buffers and objects, avoid building intermediate arrays and objects per request',
  '(map/filter chains, spread copies, per-item closures), and serialize once.',
].join(' ');

export const semiSpaceAdvice = (sizeMiB: number) => [
  `Most GC time is young-generation scavenges. Try a larger young generation:`,
  `\`NODE_OPTIONS=--max-semi-space-size=${sizeMiB} hotpath run ...\` and compare GC share and throughput`,
  `(each MiB of semi-space costs 3 MiB of heap; beyond 64 MiB it rarely helps).`,
  'If the allocation rate itself is extreme, no setting helps: shrink the allocations.',
].join(' ');

export const heapProfileHint = 'Run again with `--heap` to name the functions that allocate.';
