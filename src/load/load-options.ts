// The load flags, declared once as data. `hotpath load` adds only --json and the URL;
// `hotpath run` reuses `loadOptionSpecs` (they never mention the URL) for its own load.

import type { OptionSpec, OptionValues, ResolvedOptionValues } from '../options/option-spec.js';

/** Seconds measured when neither --duration nor --amount is given. */
export const DEFAULT_DURATION_S = 10;

export const loadOptionSpecs = [
  {
    key: 'connections',
    flag: 'connections',
    short: 'c',
    type: 'integer',
    min: 1,
    max: 100_000,
    default: 10,
    valueName: '<n>',
    description: 'Concurrent connections (split across workers)',
  },
  {
    key: 'pipelining',
    flag: 'pipelining',
    short: 'p',
    type: 'integer',
    min: 1,
    max: 1024,
    default: 1,
    valueName: '<n>',
    description: 'Requests in flight per connection (HTTP/1.1 pipelining)',
  },
  // No declared default: it would conflict with --amount once defaults are filled in (see DEFAULT_DURATION_S).
  {
    key: 'duration',
    flag: 'duration',
    short: 'd',
    type: 'duration',
    unit: 's',
    min: 0.01,
    max: 86_400,
    valueName: '<time>',
    description: 'How long to measure, e.g. 10, 30s, 2m (default: 10s unless --amount)',
    conflicts: ['amount'],
  },
  {
    key: 'amount',
    flag: 'amount',
    short: 'a',
    type: 'integer',
    min: 1,
    max: 1e9,
    valueName: '<n>',
    description: 'Send exactly this many requests instead of running for a duration',
  },
  {
    key: 'workers',
    flag: 'workers',
    short: 'w',
    type: 'integer',
    min: 1,
    max: 256,
    default: 'auto',
    keywords: { auto: 'auto' },
    valueName: '<n|auto>',
    description: 'Worker threads driving load; auto = CPU cores - 1 (at least 1)',
  },
  {
    key: 'warmup',
    flag: 'warmup',
    type: 'duration',
    unit: 's',
    min: 0,
    max: 3600,
    default: 0,
    valueName: '<time>',
    description: 'Drive load this long first and leave it out of the results',
  },
  {
    key: 'rate',
    flag: 'rate',
    short: 'R',
    type: 'number',
    min: 0.01,
    max: 10_000_000,
    valueName: '<req/s>',
    description: 'Open model: total arrival rate, sent on schedule whether or not responses came back',
  },
  { key: 'method', flag: 'method', short: 'm', type: 'string', default: 'GET', valueName: '<verb>', description: 'HTTP method' },
  { key: 'headers', flag: 'header', short: 'H', type: 'strings', valueName: '<name: value>', description: 'Request header (repeatable)' },
  {
    key: 'body',
    flag: 'body',
    short: 'b',
    type: 'string',
    valueName: '<text>',
    description: 'Request body',
    conflicts: ['bodyFile', 'scenario'],
  },
  {
    key: 'bodyFile',
    flag: 'body-file',
    type: 'string',
    valueName: '<file>',
    description: 'Read the request body from a file',
    conflicts: ['scenario'],
  },
  {
    key: 'scenario',
    flag: 'scenario',
    type: 'string',
    valueName: '<file.json>',
    description: 'JSON array of requests {method, path, headers?, body?} sent in order on every connection',
  },
  {
    key: 'keepalive',
    flag: 'keepalive',
    type: 'boolean',
    default: true,
    description: 'Open a new connection per request (Connection: close), like an HTTP/1.0 proxy',
  },
  {
    key: 'timeout',
    flag: 'timeout',
    type: 'duration',
    unit: 'ms',
    min: 1,
    max: 3_600_000,
    default: 10_000,
    valueName: '<ms>',
    description: 'Per-request timeout; a timed-out request is counted and kept in the latency',
  },
  {
    key: 'socket',
    flag: 'socket',
    type: 'string',
    valueName: '<path>',
    description: 'Connect to this Unix socket (the URL still gives Host and path)',
  },
  { key: 'insecure', flag: 'insecure', type: 'boolean', default: false, description: 'HTTPS: do not verify the server certificate' },
  {
    key: 'hdrLog',
    flag: 'hdr-log',
    type: 'string',
    valueName: '<file>',
    description: 'Write an HdrHistogram interval log (µs, one interval per second)',
  },
] as const satisfies readonly OptionSpec[];

/** Flags of `hotpath load` only (output), kept apart so `run` can reuse the engine flags. */
export const loadCommandSpecs = [
  ...loadOptionSpecs,
  { key: 'json', flag: 'json', type: 'boolean', default: false, description: 'Print only the LoadResult JSON on stdout' },
] as const satisfies readonly OptionSpec[];

/**
 * The load flags as the programmatic API takes them (all optional; defaults as declared), typed
 * from the declaration. Headers may also be given as an object.
 */
export type LoadFlags = Omit<OptionValues<typeof loadOptionSpecs>, 'headers'> & { headers?: string[] | Record<string, string> };

/** The load flags once checked (`resolveOptions`): typed, defaults filled in, headers as `Name: value` lines. */
export type CheckedLoadFlags = ResolvedOptionValues<typeof loadOptionSpecs>;

const loadKeys: ReadonlySet<string> = new Set(loadOptionSpecs.map((s) => s.key));

/** The load flags among checked options that hold more (a run's), as checked: nothing validated again. */
export function pickLoadFlags(options: CheckedLoadFlags): CheckedLoadFlags {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(options)) if (loadKeys.has(k) && v !== undefined) out[k] = v;
  return out as CheckedLoadFlags;
}
