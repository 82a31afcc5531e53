// Advice for HOTPATH_INCOMPLETE findings (Markdown): what to do when the diagnosis lacks data.

export const incompleteAdvice = [
  'Do not read this run as healthy: what is missing could hide the problem. Check the agent errors',
  "listed with this report (`agentErrors` in report.json) and the target's output in `target.log`,",
  'then run again; `--no-hooks` turns off the optional hooks if one of them keeps failing. If the',
  'agent fails again, file an issue with the run directory attached.',
].join(' ');
