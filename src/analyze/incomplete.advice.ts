// Advice for HOTPATH_INCOMPLETE findings (Markdown): what to do when the diagnosis lacks data.

export const incompleteAdvice = [
  'Do not read this run as healthy: what is missing could hide the problem. Check the agent errors',
  "listed with this report (`agentErrors` in report.json) and the target's output in `target.log`,",
  'then run again; `--no-hooks` turns off the optional hooks if one of them keeps failing. If the',
  'agent fails again, file an issue with the run directory attached.',
].join(' ');

/** The run was stopped (Ctrl-C) or failed before its load was done: nothing else is missing. */
export const interruptedAdvice = [
  'Do not read this run as healthy: it stopped before the load it was asked for had run, so what the rest of the',
  'load would have shown (growth, a leak, a slow path reached later) was not measured. Run again and let it finish',
  '(a shorter `-d` if it must be quick); the figures shown describe only the part that ran.',
].join(' ');
