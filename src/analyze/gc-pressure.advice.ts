// Advice for gc-pressure findings (Markdown).

export const allocationAdvice = (site?: string) =>
  [
    site ? `Allocate less in ${site}:` : 'Allocate less on the request path:',
    'reuse buffers and objects, avoid building intermediate arrays and objects per request',
    '(map/filter chains, spread copies, per-item closures), and serialize once.',
  ].join(' ');

/** A word as a POSIX shell reads it back: bare when safe, else single-quoted. */
export function shellWord(w: string): string {
  return /^[A-Za-z0-9_./:=@%+,-]+$/.test(w) ? w : `'${w.replace(/'/g, `'\\''`)}'`;
}

/** The semi-space sizes `hotpath run --vary` is advised to compare (MiB): the default 16 and larger. */
export const SEMI_SPACE_VARY_MIB = [16, 32, 64, 128];

export const semiSpaceAdvice = (sizeMiB: number, command?: readonly string[]) =>
  [
    `Most GC time is young-generation scavenges. Try a larger young generation`,
    command && command.length > 0
      ? `and measure it: \`hotpath run --vary '--max-semi-space-size=${SEMI_SPACE_VARY_MIB.join(',')}' -- ${command.map(shellWord).join(' ')}\` runs this load once per size (add \`--repeat 3\` and the load options you used) and prints one table with the best size, its throughput, p99, GC share and RSS`
      : `(\`NODE_OPTIONS=--max-semi-space-size=${sizeMiB}\`) and compare GC share and throughput`,
    `(each MiB of semi-space costs 3 MiB of heap; beyond ${sizeMiB} MiB it rarely helps).`,
    'If the allocation rate itself is extreme, no setting helps: shrink the allocations.',
  ].join(' ');

export const heapProfileHint = 'Run again with `--heap` to name the functions that allocate.';

/** When the server stack, not the app, allocates (see GC_APP_CHOSEN_MIN_SHARE). */
export const stackAllocationAdvice =
  "Little of this garbage is the app's own: it is what Node and the framework allocate to answer each request. " +
  'Nothing in the app shrinks it much; fewer middleware on the hot routes, a lighter response path ' +
  '(a prebuilt or cached body instead of building and serializing per request) or a leaner framework do.';
