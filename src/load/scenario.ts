// Scenario files: a JSON array of requests `{ method, path, headers?, body? }` that every
// connection sends in order, looping (e.g. create a user, then log in as it).

import { readFileSync } from 'node:fs';
import { hotpathError } from '../errors.js';
import { isToken, type ScenarioRequest } from './request-template.js';

export function readScenario(path: string): ScenarioRequest[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (cause) {
    const code = (cause as NodeJS.ErrnoException).code ?? 'EIO';
    throw hotpathError('HOTPATH_ERR_SCENARIO', `Cannot read the scenario file ${path} (${code})`, { cause, details: { path } });
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (cause) {
    throw hotpathError('HOTPATH_ERR_SCENARIO', `The scenario file ${path} is not valid JSON: ${(cause as Error).message}`, {
      cause,
      details: { path },
    });
  }
  return validateScenario(data, path);
}

/** Checks a scenario given as data; `where` names it in messages (a file path or `requests`). */
export function validateScenario(data: unknown, where: string): ScenarioRequest[] {
  const fail = (msg: string) => hotpathError('HOTPATH_ERR_SCENARIO', `${where}: ${msg}`, { details: { scenario: where } });
  if (!Array.isArray(data) || data.length === 0) throw fail('must be a non-empty JSON array of requests { method, path, headers?, body? }');
  return data.map((entry: unknown, i) => {
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) throw fail(`entry ${i} must be an object`);
    const e = entry as Record<string, unknown>;
    for (const key of Object.keys(e)) {
      if (!['method', 'path', 'headers', 'body'].includes(key)) throw fail(`entry ${i} has an unknown field "${key}"`);
    }
    if (e.method !== undefined && (typeof e.method !== 'string' || !isToken(e.method)))
      throw fail(`entry ${i}: method must be an HTTP method such as "POST"`);
    if (e.path !== undefined && (typeof e.path !== 'string' || !e.path.startsWith('/') || /[\s]/.test(e.path))) {
      throw fail(`entry ${i}: path must start with "/" and contain no spaces`);
    }
    const headers = checkHeaders(e.headers, () => fail(`entry ${i}: headers must be an object of string values`));
    let body: string | undefined;
    if (typeof e.body === 'string') body = e.body;
    else if (e.body !== undefined) body = JSON.stringify(e.body);
    return { method: e.method as string | undefined, path: (e.path as string | undefined) ?? '/', headers, body };
  });
}

function checkHeaders(value: unknown, fail: () => Error): Record<string, string> | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw fail();
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(value)) {
    if (!isToken(k) || (typeof v !== 'string' && typeof v !== 'number') || /[\r\n]/.test(String(v))) throw fail();
    out[k] = String(v);
  }
  return out;
}
