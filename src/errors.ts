// The one registry of hotpath's errors. Every error hotpath raises on purpose has a
// `HOTPATH_ERR_*` code listed here and documented in docs/errors.md (a test keeps the
// two in step). Callers match on `err.code`, never on the class.

export const errorCodes = {
  // CLI and options
  HOTPATH_ERR_UNKNOWN_COMMAND: 'Unknown command',
  HOTPATH_ERR_UNKNOWN_OPTION: 'Unknown option',
  HOTPATH_ERR_INVALID_OPTION: 'Invalid option value',
  HOTPATH_ERR_MISSING_ARGUMENT: 'A required argument is missing',
  // Load engine
  HOTPATH_ERR_INVALID_URL: 'The target URL is invalid',
  HOTPATH_ERR_BODY_FILE: 'The request body file cannot be read',
  HOTPATH_ERR_SCENARIO: 'The scenario file cannot be read or is invalid',
  HOTPATH_ERR_CONNECT: 'Nothing answers at the target address',
  HOTPATH_ERR_DNS: 'The target host name does not resolve',
  HOTPATH_ERR_HDR_LOG: 'The HdrHistogram log cannot be written',
  HOTPATH_ERR_NO_RESPONSES: 'Load ran but no request got a response',
  HOTPATH_ERR_TLS: 'The TLS handshake with the target failed (certificate not trusted, or not TLS)',
  // Profiles and exports
  HOTPATH_ERR_PROFILE: 'A profile file cannot be read or is malformed',
  HOTPATH_ERR_NO_PROFILE: 'The run directory holds no matching profile',
  // Runs (`hotpath run`) and run directories
  HOTPATH_ERR_SPAWN: 'The target command cannot be started',
  HOTPATH_ERR_AGENT_MISSING: 'The agent bundle is missing from the installation',
  HOTPATH_ERR_TARGET_EXITED: 'The target exited before it started listening',
  HOTPATH_ERR_READY_TIMEOUT: 'The target did not start listening in time',
  HOTPATH_ERR_OUT_DIR: 'The output directory cannot be created',
  HOTPATH_ERR_RUN_DIR: 'Not a hotpath run directory, or it cannot be written',
  // Report
  HOTPATH_ERR_REPORT_UI: 'The prebuilt report UI is missing from the installation',
  // Overload protection (hotpath/protect)
  HOTPATH_ERR_PROTECT_OPTION: 'Invalid option for protect()',
  // Demo (`hotpath demo`)
  HOTPATH_ERR_DEMO_SETUP: 'The packages a bundled example needs cannot be installed',

  // Run directories (read back by `report` and `export`)
  HOTPATH_ERR_RUN_DIR_PATH: 'A run directory names a file outside itself',

  // Native profiles (`hotpath prof`, `hotpath import`)
  HOTPATH_ERR_TICK_LOG: 'The file is not a V8 tick log (node --prof), or it cannot be read',
  HOTPATH_ERR_TICK_LOG_VERSION: 'The tick log was written by a V8 too old for hotpath to read',
  HOTPATH_ERR_PERF_SCRIPT: 'The file is not `perf script` output, or it cannot be read',

  // Comparing runs (`hotpath compare`, `hotpath run --baseline`)
  HOTPATH_ERR_COMPARE_NO_LOAD: 'A compared run has no load results',
  HOTPATH_ERR_COMPARE_MISMATCH: 'The compared runs measured different requests',
  HOTPATH_ERR_BUDGET: 'A performance budget cannot be read',
  HOTPATH_ERR_VARY: 'An experiment (--vary) cannot be read',

  // Native stacks (`hotpath run --native`): a warning, the run goes on without them
  HOTPATH_ERR_NATIVE_UNAVAILABLE: 'Linux perf cannot record the target (missing, not permitted, or not Linux)',
} as const satisfies Record<`HOTPATH_ERR_${string}`, string>;

export type ErrorCode = keyof typeof errorCodes;

export interface HotpathErrorOptions {
  /** Extra facts for people and for report.json (never secrets). */
  details?: Record<string, unknown>;
  /** The error that caused this one. */
  cause?: unknown;
  /** Print the usage of the command after the message (CLI input errors). */
  showUsage?: boolean;
}

export class HotpathError extends Error {
  readonly code: ErrorCode;
  readonly details: Record<string, unknown>;
  readonly showUsage: boolean;

  constructor(code: ErrorCode, message: string, options: HotpathErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'HotpathError';
    this.code = code;
    this.details = options.details ?? {};
    this.showUsage = options.showUsage ?? false;
  }
}

/** Creates a coded error. `message` says what is wrong in this case; the code says which kind. */
export function hotpathError(code: ErrorCode, message: string, options?: HotpathErrorOptions): HotpathError {
  return new HotpathError(code, message, options);
}

/** True when `err` carries one of hotpath's codes (matched by code, not by class identity). */
export function isHotpathError(err: unknown): err is { code: ErrorCode; message: string } {
  return (
    typeof err === 'object' &&
    err !== null &&
    typeof (err as { code?: unknown }).code === 'string' &&
    (err as { code: string }).code in errorCodes
  );
}
