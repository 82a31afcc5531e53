// A Finding: one diagnosis, with its evidence, the culprit in the user's code and the fix.
// report.json's `findings[]` holds these, ordered by impact (findings[0] is the main problem).

export const CATEGORIES = [
  'event-loop-blocking',
  'sync-io',
  'gc-pressure',
  'memory-leak',
  'listener-leak',
  'handler-growth',
  'timer-leak',
  'io-wait',
  'serialization',
  'connection-churn',
  'unanswered-requests',
  'off-loop-cpu',
  'load-generator-bound',
  'healthy',
  'incomplete',
  'setup-failed',
  'socket-writes',
  'off-target-load',
  'target-ended',
] as const;

export type Category = (typeof CATEGORIES)[number];
export type Severity = 'critical' | 'warning' | 'info';

export interface Culprit {
  /**
   * The function's own name as written in the source; one without a name reads
   * "(anonymous in f)" when the run's function ranges place it in function f, else "(anonymous)".
   */
  function: string;
  /** Path relative to the target's working directory (after source maps). */
  file: string;
  /** 1-based. */
  line: number;
  column?: number;
}

/**
 * The evidence fields one analyzer writes and analyze-run's steps read (merging findings about one
 * culprit, ordering root causes first, heap growth held by a leak): typed on both sides.
 */
export interface LinkedEvidence {
  /** Growth analyzers: how well the latency trend fits the growth (set when the growth makes latency creep). */
  latencyTrendR2?: number;
  /** sync-io: the call is a require() of a module deleted from require.cache (reloaded per request). */
  reloadsModule?: boolean;
  /** sync-io: calls per request. */
  callsPerRequest?: number;
  /** memory-leak: heap kept per request served. */
  bytesPerRequest?: number;
  /** Listener, timer, handler and handle leaks: registrations (or handles) kept per request. */
  perRequest?: number;
  /** listener-leak: the same counted over every socket. */
  perRequestAllSockets?: number;
  /** Blocking and serialization: the work ran in no app function (a body parser's JSON.parse)... */
  noAppCode?: boolean;
  /** ...but in this dependency or Node module, which names the place instead of a culprit. */
  workSource?: string;
  /** event-loop-blocking: the kind of work that dominates (`json` for JSON-bound blocking). */
  work?: string;
  /** A finding that is the cause of another one (connection churn behind connection set-up blocking the loop): its code. */
  explains?: string;
}

export type Evidence = Record<string, unknown> & LinkedEvidence;

export interface Finding {
  /**
   * Stable identifier of the detector and case, e.g. `HOTPATH_LISTENER_LEAK`: one of finding-codes.ts
   * when hotpath writes it (a test keeps the two in step); a string when read back, since a run
   * directory written by another version may hold codes this one does not know.
   */
  code: string;
  category: Category;
  severity: Severity;
  title: string;
  /** One or two sentences: what happens and how much it costs. */
  summary: string;
  /**
   * The measured figures behind the finding (names are documented per analyzer); the few that
   * analyze-run's steps read across analyzers are typed (LinkedEvidence).
   */
  evidence: Evidence;
  culprit?: Culprit;
  /** What to change, in Markdown. */
  recommendation: string;
  /** Share (0..1) of request time or CPU this finding explains; orders the findings. */
  impact: number;
}
