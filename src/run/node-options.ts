// NODE_OPTIONS for the target: the agent preloaded with `--require "<absolute path>"`,
// followed by whatever the user already had. Inside NODE_OPTIONS a path with spaces only
// survives double quotes (a backslash-escaped space does not), and inside the quotes `"`
// and `\` are escaped with a backslash.

import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { hotpathError } from '../errors.js';

export function quoteNodeOption(value: string): string {
  return `"${value.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

export function targetNodeOptions(agentPath: string, userNodeOptions: string | undefined): string {
  const own = `--require ${quoteNodeOption(agentPath)}`;
  const user = userNodeOptions?.trim();
  return user ? `${own} ${user}` : own;
}

/** The bundled agent: dist/agent/hotpath-agent.cjs, next to dist/src where this file is built. */
export function agentBundlePath(): string {
  const path = fileURLToPath(new URL('../../agent/hotpath-agent.cjs', import.meta.url));
  if (!existsSync(path)) {
    throw hotpathError('HOTPATH_ERR_AGENT_MISSING', `The agent bundle ${path} is missing; run \`npm run build\` (or reinstall hotpath)`, {
      details: { path },
    });
  }
  return path;
}
