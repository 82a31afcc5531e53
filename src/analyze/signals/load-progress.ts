// How much of the asked load ran before a run was cut short (the target ended, Ctrl-C): the time
// into the measured load and its share of the duration asked (or the requests of --amount), and
// the requests answered and sent by then. Read by target-ended.ts and incomplete.ts.

import type { RunData } from '../../run-dir/run-data.js';
import { DEFAULT_DURATION_S } from '../../load/load-options.js';
import { round } from './stats.js';

export interface LoadProgress {
  /** Epoch ms the measured load started, when it did. */
  loadStart?: number;
  /** Ms from the load's start to `at` (negative: before the load started). */
  intoLoadMs?: number;
  /** The duration asked, ms (absent with --amount). */
  askedMs?: number;
  /** Requests asked with --amount. */
  askedRequests?: number;
  answered: number;
  sent: number;
}

const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

/** The load's progress at epoch ms `at` (default: where the measured load stopped). */
export function loadProgress(run: RunData, at?: number): LoadProgress {
  const load = run.load;
  const loadStart = run.meta.phases.find((p) => p.phase === 'load')?.start ?? load?.start;
  const end = at ?? run.loadWindow?.end ?? load?.end;
  const askedRequests = num(load?.options.amount) ?? num(run.meta.options?.amount);
  const askedS =
    askedRequests === undefined ? (num(load?.options.duration) ?? num(run.meta.options?.duration) ?? DEFAULT_DURATION_S) : undefined;
  return {
    ...(loadStart !== undefined ? { loadStart } : {}),
    ...(loadStart !== undefined && end !== undefined ? { intoLoadMs: end - loadStart } : {}),
    ...(askedS !== undefined ? { askedMs: askedS * 1000 } : {}),
    ...(askedRequests !== undefined ? { askedRequests } : {}),
    answered: load?.requests.total ?? 0,
    sent: load ? Math.max(load.requests.sent, load.requests.total) : 0,
  };
}

const seconds = (ms: number) => `${round(ms / 1000, ms < 10_000 ? 1 : 0)} s`;
const count = (n: number) => n.toLocaleString('en-US');

/** "1.2 s into the 4 s load asked (30 %), after 2,999 requests answered (3,009 sent)", or "before the measured load started". */
export function describeProgress(p: LoadProgress): string {
  if (p.loadStart === undefined || p.intoLoadMs === undefined || p.intoLoadMs < 0) return 'before the measured load started';
  const into = seconds(p.intoLoadMs);
  if (p.askedRequests !== undefined)
    return `${into} into the load, after ${count(p.answered)} of the ${count(p.askedRequests)} requests asked`;
  const asked =
    p.askedMs !== undefined && p.askedMs > 0
      ? `${into} into the ${seconds(p.askedMs)} load asked (${round(Math.min(1, p.intoLoadMs / p.askedMs) * 100, 0)} %)`
      : `${into} into the load`;
  return `${asked}, after ${count(p.answered)} requests answered (${count(p.sent)} sent)`;
}

/** The share of the asked load that ran, 0..1, when it is known. */
export function progressShare(p: LoadProgress): number | undefined {
  if (p.intoLoadMs === undefined) return undefined;
  if (p.intoLoadMs < 0) return 0;
  if (p.askedRequests !== undefined) return p.askedRequests > 0 ? Math.min(1, p.answered / p.askedRequests) : undefined;
  return p.askedMs !== undefined && p.askedMs > 0 ? Math.min(1, p.intoLoadMs / p.askedMs) : undefined;
}
