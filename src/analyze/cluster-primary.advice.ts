// Advice for HOTPATH_CLUSTER_PRIMARY (Markdown), in the order to try it.

import { shellWord } from './gc-pressure.advice.js';

/** The command that measures round-robin against SCHED_NONE on the user's app (the run's own command when known). */
export function varySchedCommand(command?: readonly string[]): string {
  const target = command && command.length > 0 ? command.map(shellWord).join(' ') : 'node server.js';
  return `hotpath run --no-keepalive --vary 'NODE_CLUSTER_SCHED_POLICY=rr,none' -- ${target}`;
}

export function clusterPrimaryAdvice(spreadNote: string | undefined, command?: readonly string[]): string {
  return [
    '1. **Keep-alive from the proxy.** The primary pays per *new* connection, not per request: with',
    'keep-alive between the proxy and Node (nginx: `proxy_http_version 1.1;`, `proxy_set_header Connection "";`,',
    'an `upstream { keepalive 64; }`) each connection is accepted and handed over once, then serves many requests.',
    '',
    '2. **Fewer new connections per second.** Pool connections in whatever calls this service (a keep-alive',
    'agent, fewer short-lived clients); every connection avoided is one accept and one IPC hand-off less.',
    '',
    '3. **Let the workers accept: `cluster.schedulingPolicy = cluster.SCHED_NONE`** before the first `cluster.fork()`',
    '(or `NODE_CLUSTER_SCHED_POLICY=none` in the environment). The primary then leaves the connection path:',
    'each worker accepts from the shared socket itself. The known cost: the kernel, not Node, picks the worker,',
    'and on Linux the spread is uneven (a few workers take most connections); hotpath reports requests per worker',
    `so you can see it${spreadNote !== undefined ? ` (${spreadNote})` : ''}. To measure both on your app:`,
    `\`${varySchedCommand(command)}\` (add \`--repeat 3\` and the load options you used: the spread varies from run to run).`,
    '',
    '4. **One process per port behind the proxy**, and let the proxy balance (an nginx `upstream` with one',
    'server per port), or on Node 22.12+ and 23.1+ start each process with `server.listen({ port, reusePort: true })`',
    'so the kernel spreads connections among them (Linux 3.9+, FreeBSD 12+; Node 20 has no `reusePort`).',
  ].join('\n');
}
