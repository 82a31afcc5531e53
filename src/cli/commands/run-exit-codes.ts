// The exit codes of `hotpath run` beyond 0, 1 (failed) and 2 (bad input): docs/run.md.

export const EXIT_FAILED = 1;
export const EXIT_INTERRUPTED = 130;
/** The run completed but the diagnosis lacks evidence (HOTPATH_INCOMPLETE): no verdict. */
export const EXIT_INCOMPLETE = 3;
/** A budget (--assert, --max-regression) failed; the verdict lines say which. */
export const EXIT_BUDGET = 4;
