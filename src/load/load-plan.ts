// Turns load options (from the CLI or the programmatic API) into a validated plan: options
// checked once through the shared OptionSpec declaration (resolveLoadFlags), then the plan built
// from the checked flags (planLoad): cross-checks, the URL parsed, the body and scenario files
// read, every request prebuilt. All failures are coded errors.

import { closeSync, fstatSync, openSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { resolveOptions } from '../options/option-spec.js';
import { hotpathError } from '../errors.js';
import { redactUrl } from '../redact.js';
import { DEFAULT_DURATION_S, loadOptionSpecs, type CheckedLoadFlags, type LoadFlags } from './load-options.js';
import {
  buildTemplate,
  connectionCloseAsked,
  isToken,
  overriddenHeaderWarnings,
  parseHeaderLines,
  type RequestTemplate,
  type ScenarioRequest,
} from './request-template.js';
import { readScenario, validateScenario } from './scenario.js';

export interface LoadOptions extends LoadFlags {
  /** http:// or https:// URL; with `socket`, it still gives the Host header and the path. */
  url: string;
  /** A scenario given as data instead of a file: requests sent in order on every connection. */
  requests?: ScenarioRequest[];
  /** Requests sent once, in order, before warm-up (e.g. create the user the load logs in as). */
  setup?: ScenarioRequest[];
  /** Stops the run early; the promise then resolves with what was measured. */
  signal?: AbortSignal;
}

/** What planLoad takes: load options whose flags were checked once, where the API was entered. */
export interface CheckedLoadOptions extends Omit<LoadOptions, keyof LoadFlags> {
  flags: CheckedLoadFlags;
}

/** Options after validation and defaults. */
export interface ResolvedFlags {
  connections: number;
  pipelining: number;
  duration: number;
  amount?: number;
  workers: number;
  warmup: number;
  rate?: number;
  method: string;
  headers: Record<string, string>;
  keepalive: boolean;
  timeout: number;
  socket?: string;
  insecure: boolean;
  hdrLog?: string;
  scenarioLength?: number;
}

export interface LoadPlan {
  url: URL;
  flags: ResolvedFlags;
  templates: RequestTemplate[];
  setup: RequestTemplate[];
  /** Things about the requests worth saying (headers the engine overrides); go to the result's warnings. */
  warnings: string[];
}

const PROGRAMMATIC_KEYS = new Set(['url', 'requests', 'setup', 'signal']);

/** Checks the load flags of the programmatic options once: the one place they are validated. */
export function resolveLoadFlags(options: LoadOptions): CheckedLoadOptions {
  const raw: Record<string, unknown> = {};
  const rest: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(options)) (PROGRAMMATIC_KEYS.has(k) ? rest : raw)[k] = v;
  if (raw.headers !== undefined && !Array.isArray(raw.headers) && typeof raw.headers === 'object') {
    raw.headers = Object.entries(raw.headers as Record<string, unknown>).map(([k, v]) => `${k}: ${String(v)}`);
  }
  if (options.requests !== undefined && raw.scenario !== undefined) {
    throw invalid('scenario', 'give either a scenario file or `requests`, not both');
  }
  return { ...(rest as Omit<CheckedLoadOptions, 'flags'>), flags: resolveOptions(loadOptionSpecs, raw) };
}

/** Validates the options and builds the plan (the programmatic API's way in). */
export function buildPlan(options: LoadOptions): LoadPlan {
  return planLoad(resolveLoadFlags(options));
}

/**
 * The plan from checked flags. With `readBodyBytes` false it only proves the body file can be
 * read: `hotpath run` plans with a stand-in URL before it starts anything, so bad input never
 * starts the target.
 */
export function planLoad(options: CheckedLoadOptions, readBodyBytes = true): LoadPlan {
  const v = options.flags;
  const url = parseUrl(options.url);
  const method = v.method.toUpperCase();
  if (!isToken(method)) throw invalid('method', `--method must be an HTTP method token; got ${JSON.stringify(v.method)}`);
  const parsed = parseHeaderLines(v.headers ?? []);
  if ('bad' in parsed) throw invalid('header', `--header must look like "Name: value"; got ${JSON.stringify(parsed.bad)}`);
  const body = v.bodyFile !== undefined ? readBody(v.bodyFile, readBodyBytes) : v.body;
  const scenario =
    options.requests !== undefined
      ? validateScenario(options.requests, 'requests')
      : v.scenario !== undefined
        ? readScenario(v.scenario)
        : undefined;
  const flags: ResolvedFlags = {
    connections: v.connections,
    pipelining: v.pipelining,
    duration: v.duration ?? DEFAULT_DURATION_S,
    amount: v.amount,
    workers: v.workers === 'auto' ? Math.max(1, availableParallelism() - 1) : v.workers,
    warmup: v.warmup,
    rate: v.rate,
    method,
    headers: parsed.headers,
    // `-H "Connection: close"` means what --no-keepalive means: one connection per request.
    keepalive: v.keepalive && !connectionCloseAsked(parsed.headers),
    timeout: v.timeout,
    socket: v.socket,
    insecure: v.insecure,
    hdrLog: v.hdrLog,
    scenarioLength: scenario?.length,
  };
  crossCheck(flags);
  if (url.username !== '' && !Object.keys(flags.headers).some((k) => k.toLowerCase() === 'authorization')) {
    const user = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
    flags.headers.Authorization = `Basic ${Buffer.from(user).toString('base64')}`;
  }
  const ctx = { host: url.host, keepalive: flags.keepalive };
  const withGlobal = (r: ScenarioRequest): ScenarioRequest => ({ ...r, headers: { ...flags.headers, ...r.headers } });
  const requests = scenario ?? [{ method, path: url.pathname + url.search, body }];
  const setup = options.setup === undefined ? [] : validateScenario(options.setup, 'setup');
  const warnings = [
    ...overriddenHeaderWarnings({ headers: flags.headers, body }, flags.keepalive),
    ...(scenario ?? []).flatMap((r, i) => overriddenHeaderWarnings({ ...r }, flags.keepalive, ` (scenario request ${i + 1})`)),
  ];
  return {
    url,
    flags,
    templates: requests.map((r) => buildTemplate(withGlobal(r), ctx)),
    setup: setup.map((r) => buildTemplate(withGlobal(r), { host: url.host, keepalive: true })),
    warnings,
  };
}

function invalid(option: string, message: string) {
  return hotpathError('HOTPATH_ERR_INVALID_OPTION', message, { showUsage: true, details: { option } });
}

function parseUrl(raw: unknown): URL {
  if (typeof raw !== 'string' || raw === '') {
    throw hotpathError('HOTPATH_ERR_MISSING_ARGUMENT', 'The URL to load is missing, e.g. hotpath load http://127.0.0.1:3000/', {
      showUsage: true,
    });
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch (cause) {
    throw hotpathError(
      'HOTPATH_ERR_INVALID_URL',
      `${JSON.stringify(redactUrl(raw))} is not a URL; write it like http://127.0.0.1:3000/path`,
      { cause, showUsage: true },
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw hotpathError(
      'HOTPATH_ERR_INVALID_URL',
      `${JSON.stringify(redactUrl(raw))}: only http: and https: URLs can be loaded (use --socket for a Unix socket)`,
      { showUsage: true },
    );
  }
  if (url.hostname === '')
    throw hotpathError('HOTPATH_ERR_INVALID_URL', `${JSON.stringify(redactUrl(raw))} has no host`, { showUsage: true });
  return url;
}

/** The file's bytes, unchanged (a binary upload, a gzip body): never decoded as text. */
function readBody(path: string, bytes: boolean): Buffer {
  try {
    if (!bytes) {
      // Opening it proves it can be read; a directory opens but does not read.
      const fd = openSync(path, 'r');
      try {
        if (fstatSync(fd).isDirectory()) throw Object.assign(new Error('is a directory'), { code: 'EISDIR' });
      } finally {
        closeSync(fd);
      }
      return Buffer.alloc(0);
    }
    return readFileSync(path);
  } catch (cause) {
    const code = (cause as NodeJS.ErrnoException).code ?? 'EIO';
    throw hotpathError('HOTPATH_ERR_BODY_FILE', `Cannot read the body file ${path} (${code})`, { cause, details: { path } });
  }
}

/** Checks between options that the per-option declaration cannot express. */
function crossCheck(f: ResolvedFlags): void {
  if (f.rate !== undefined && f.amount === undefined && f.rate * f.duration < 1) {
    throw invalid('rate', `--rate ${f.rate} for ${f.duration} s plans no request at all; raise --rate or --duration`);
  }
  if (!f.keepalive && f.pipelining > 1) {
    throw invalid(
      'pipelining',
      '--pipelining needs keep-alive: with --no-keepalive (or -H "Connection: close") each connection carries one request',
    );
  }
  if (f.connections * f.pipelining > 1_000_000) {
    throw invalid(
      'pipelining',
      `--connections × --pipelining is ${f.connections * f.pipelining}; at most 1000000 requests can be in flight`,
    );
  }
}
