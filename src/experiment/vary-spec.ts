// Reads `hotpath run --vary`: one node flag with its values (`--max-semi-space-size=16,32,64`)
// or one environment variable with its values (`NODE_CLUSTER_SCHED_POLICY=rr,none`), and
// applies one value to the target's command and environment (docs/run.md, Experiments).

import { basename } from 'node:path';
import { hotpathError } from '../errors.js';

export interface VarySpec {
  /** `node-flag` (given to node) or `env` (an environment variable of the target). */
  kind: 'node-flag' | 'env';
  /** The flag with its dashes (`--max-semi-space-size`), or the variable's name. */
  name: string;
  values: string[];
  /** As written. */
  text: string;
}

const FORMS = "--vary '--<node-flag>=v1,v2[,…]' or --vary 'NAME=v1,v2[,…]' (an environment variable)";

function bad(text: string, why: string): Error {
  return hotpathError('HOTPATH_ERR_VARY', `--vary ${JSON.stringify(text)}: ${why}; it reads ${FORMS}`, {
    showUsage: true,
    details: { vary: text },
  });
}

export function parseVary(raw: string): VarySpec {
  const text = raw.trim();
  const eq = text.indexOf('=');
  if (eq <= 0) throw bad(text, 'no values (name=v1,v2)');
  const name = text.slice(0, eq);
  const values = text
    .slice(eq + 1)
    .split(',')
    .map((v) => v.trim());
  let kind: VarySpec['kind'];
  if (/^--[a-z0-9][a-z0-9_-]*$/i.test(name)) kind = 'node-flag';
  else if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) kind = 'env';
  else throw bad(text, `"${name}" is neither a node flag (--name) nor an environment variable name`);
  if (values.some((v) => v === '')) throw bad(text, 'an empty value');
  if (new Set(values).size !== values.length) throw bad(text, 'a value given twice');
  if (values.length < 2) throw bad(text, 'one value only: an experiment compares at least two');
  return { kind, name, values, text };
}

/** `--max-semi-space-size=16` or `NAME=v`: how one value is named in tables and directories. */
export function variantLabel(spec: VarySpec, value: string): string {
  return `${spec.name}=${value}`;
}

/** A command that is node itself (`node`, `node20`, this process's executable): its flags go on its argv. */
export function isNodeCommand(command: readonly string[]): boolean {
  const exe = command[0];
  if (!exe) return false;
  return exe === process.execPath || /^node(\d+)?(\.exe)?$/i.test(basename(exe));
}

/**
 * The command and environment of the target for one value. An environment variable is set in
 * its environment. A node flag goes on node's argv when the command is node (any flag works
 * there), else into NODE_OPTIONS (where node refuses the flags it does not allow in it:
 * the run then fails to start, saying so).
 */
export function applyVariant(
  spec: VarySpec,
  value: string,
  command: readonly string[],
  env: NodeJS.ProcessEnv,
): { command: string[]; env: NodeJS.ProcessEnv } {
  if (spec.kind === 'env') return { command: [...command], env: { ...env, [spec.name]: value } };
  const flag = `${spec.name}=${value}`;
  if (isNodeCommand(command)) return { command: [command[0], flag, ...command.slice(1)], env: { ...env } };
  const user = env.NODE_OPTIONS?.trim();
  return { command: [...command], env: { ...env, NODE_OPTIONS: user ? `${user} ${flag}` : flag } };
}
