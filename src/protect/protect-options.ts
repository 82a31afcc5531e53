// The options of protect(): their types, defaults and validation. Declared once as data
// (`optionRules`) so validation, defaults and docs/protect.md agree; a bad option throws
// HOTPATH_ERR_PROTECT_OPTION when the guard is created, never while serving.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { hotpathError } from '../errors.js';

/** The signal that put the server under pressure. */
export type PressureReason = 'eventLoopDelay' | 'eventLoopUtilization' | 'heapUsedBytes' | 'rssBytes';

/**
 * Answers a shed request instead of the default 503. Gets the raw Node request and response
 * in every framework (the adapters hand over the socket-level objects), so one handler
 * serves all of them. It must end the response.
 */
export type PressureHandler = (req: IncomingMessage, res: ServerResponse, reason: PressureReason) => void | Promise<void>;

/** Requests that are never shed: exact paths, path patterns, or a predicate. */
export type ExemptOption = ReadonlyArray<string | RegExp> | ((req: IncomingMessage) => boolean);

export interface ProtectOptions {
  /** Shed a request that can have waited more than this many ms on a busy event loop (0 = off). Default 100. */
  maxEventLoopDelay?: number;
  /** Shed when the loop was busy more than this share (0..1) of the last window (0 = off). Default 0. */
  maxEventLoopUtilization?: number;
  /** Shed when V8's used heap exceeds this many bytes (0 = off). Default 0. */
  maxHeapUsedBytes?: number;
  /** Shed when the resident set size exceeds this many bytes (0 = off). Default 0. */
  maxRssBytes?: number;
  /** Window in ms over which utilization, the delay p99 and memory are sampled. Default 250. */
  sampleInterval?: number;
  /** Timer resolution in ms of the delay measurement (whole ms, >= 1). Default 10. */
  resolution?: number;
  /** Stay under pressure until the signal stayed below threshold × recoveryRatio this long, in ms (0 = off). Default 0. */
  recoveryTime?: number;
  /** With recoveryTime: the share of the threshold the signal must fall below, in (0, 1]. Default 0.8. */
  recoveryRatio?: number;
  /** Seconds sent in the Retry-After header of the 503 (whole, >= 0). Default 1. */
  retryAfter?: number;
  /** Requests never shed (health checks): paths matched against the path without the query. Default []. */
  exempt?: ExemptOption;
  /** Answers a shed request instead of the default 503. */
  onPressure?: PressureHandler;
}

export interface ResolvedProtectOptions {
  maxEventLoopDelay: number;
  maxEventLoopUtilization: number;
  maxHeapUsedBytes: number;
  maxRssBytes: number;
  sampleInterval: number;
  resolution: number;
  recoveryTime: number;
  recoveryRatio: number;
  retryAfter: number;
  exempt: ExemptOption;
  onPressure: PressureHandler | undefined;
}

interface NumberRule {
  kind: 'number';
  default: number;
  min: number;
  max?: number;
  integer?: boolean;
  minExclusive?: boolean;
}

/** Numeric options: bounds and defaults, the one source for validation and docs. */
export const numberRules = {
  maxEventLoopDelay: { kind: 'number', default: 100, min: 0 },
  maxEventLoopUtilization: { kind: 'number', default: 0, min: 0, max: 1 },
  maxHeapUsedBytes: { kind: 'number', default: 0, min: 0 },
  maxRssBytes: { kind: 'number', default: 0, min: 0 },
  sampleInterval: { kind: 'number', default: 250, min: 1, max: 60_000 },
  resolution: { kind: 'number', default: 10, min: 1, max: 1000, integer: true },
  recoveryTime: { kind: 'number', default: 0, min: 0, max: 3_600_000 },
  recoveryRatio: { kind: 'number', default: 0.8, min: 0, max: 1, minExclusive: true },
  retryAfter: { kind: 'number', default: 1, min: 0, max: 86_400, integer: true },
} as const satisfies Record<string, NumberRule>;

const otherKeys = ['exempt', 'onPressure'] as const;
const knownKeys: ReadonlySet<string> = new Set([...Object.keys(numberRules), ...otherKeys]);

function invalid(key: string, expected: string, value: unknown): Error {
  return hotpathError('HOTPATH_ERR_PROTECT_OPTION', `protect(): option ${key} must be ${expected}; got ${describe(value)}`, {
    details: { option: key },
  });
}

function describe(value: unknown): string {
  if (typeof value === 'function') return 'a function';
  if (value instanceof RegExp) return String(value);
  if (typeof value === 'number' || typeof value === 'bigint') return String(value);
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return typeof value;
  }
}

function checkNumber(key: string, rule: NumberRule, value: unknown): number {
  if (value === undefined) return rule.default;
  const range = rule.max === undefined ? `>= ${rule.min}` : `between ${rule.min} and ${rule.max}`;
  const expected = `${rule.integer ? 'a whole number' : 'a finite number'} ${rule.minExclusive ? `> ${rule.min} and <= ${rule.max}` : range}`;
  if (typeof value !== 'number' || !Number.isFinite(value)) throw invalid(key, expected, value);
  if (rule.integer && !Number.isInteger(value)) throw invalid(key, expected, value);
  const tooLow = rule.minExclusive ? value <= rule.min : value < rule.min;
  if (tooLow || (rule.max !== undefined && value > rule.max)) throw invalid(key, expected, value);
  return value;
}

function checkExempt(value: unknown): ExemptOption {
  if (value === undefined) return [];
  if (typeof value === 'function') return value as ExemptOption;
  const ok = Array.isArray(value) && value.every((p) => (typeof p === 'string' && p.startsWith('/')) || p instanceof RegExp);
  if (!ok) throw invalid('exempt', 'an array of paths (starting with /) and RegExps, or a function (req) => boolean', value);
  return value as ReadonlyArray<string | RegExp>;
}

function checkHandler(value: unknown): PressureHandler | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'function') throw invalid('onPressure', 'a function (req, res, reason)', value);
  return value as PressureHandler;
}

/** Validates and defaults the options; throws HOTPATH_ERR_PROTECT_OPTION on the first bad one. */
export function resolveProtectOptions(input: unknown = {}): ResolvedProtectOptions {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    throw invalid('(options)', 'an object', input);
  }
  const raw = input as Record<string, unknown>;
  for (const key of Object.keys(raw)) {
    if (!knownKeys.has(key)) {
      throw hotpathError('HOTPATH_ERR_PROTECT_OPTION', `protect(): unknown option ${key}; known options: ${[...knownKeys].join(', ')}`, {
        details: { option: key },
      });
    }
  }
  const n = (key: keyof typeof numberRules): number => checkNumber(key, numberRules[key], raw[key]);
  return {
    maxEventLoopDelay: n('maxEventLoopDelay'),
    maxEventLoopUtilization: n('maxEventLoopUtilization'),
    maxHeapUsedBytes: n('maxHeapUsedBytes'),
    maxRssBytes: n('maxRssBytes'),
    sampleInterval: n('sampleInterval'),
    resolution: n('resolution'),
    recoveryTime: n('recoveryTime'),
    recoveryRatio: n('recoveryRatio'),
    retryAfter: n('retryAfter'),
    exempt: checkExempt(raw.exempt),
    onPressure: checkHandler(raw.onPressure),
  };
}
