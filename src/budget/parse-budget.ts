// Reads one `--assert` budget: `<metric><op><number>[unit]` (latency percentiles in ms, s or
// us; `rps`; `errors` as a count or a percentage), or `no critical` / `no warning`.

import { hotpathError } from '../errors.js';
import type { Budget, BudgetMetric } from './budget.js';

const FORMS = "p50|p75|p90|p97_5|p99|p999|max<time (e.g. 'p99<50ms'), rps>n, errors<n or errors<n%, 'no critical', 'no warning'";
const LATENCY = new Set(['p50', 'p75', 'p90', 'p97_5', 'p99', 'p999', 'max']);
const TO_MS: Record<string, number> = { us: 0.001, µs: 0.001, ms: 1, s: 1000, '': 1 };

function bad(text: string, why: string): Error {
  return hotpathError('HOTPATH_ERR_BUDGET', `--assert ${JSON.stringify(text)}: ${why}; budgets read ${FORMS}`, {
    showUsage: true,
    details: { budget: text },
  });
}

export function parseBudget(raw: string): Budget {
  const text = raw.trim();
  const none = /^no\s+(critical|warnings?)$/i.exec(text);
  if (none) return { kind: 'no-findings', text, severity: none[1].toLowerCase().startsWith('critical') ? 'critical' : 'warning' };
  const m = /^([a-z0-9_.]+)\s*(<=|>=|<|>)\s*(\d+(?:\.\d+)?)\s*(us|µs|ms|s|%)?$/i.exec(text);
  if (!m) throw bad(text, 'not a budget');
  const name = m[1].toLowerCase().replace('.', '_');
  const op = m[2] as '<' | '<=' | '>' | '>=';
  const n = Number(m[3]);
  const unit = (m[4] ?? '').toLowerCase();
  if (LATENCY.has(name)) {
    if (unit === '%') throw bad(text, 'a latency takes a time (ms, s or us)');
    return { kind: 'limit', text, metric: name as BudgetMetric, op, value: n * TO_MS[unit] };
  }
  if (name === 'rps' && unit === '') return { kind: 'limit', text, metric: 'rps', op, value: n };
  if (name === 'errors' && (unit === '' || unit === '%')) {
    return unit === '%'
      ? { kind: 'limit', text, metric: 'errorRate', op, value: n / 100 }
      : { kind: 'limit', text, metric: 'errors', op, value: n };
  }
  throw bad(text, `unknown figure or unit "${m[1]}${m[4] ?? ''}"`);
}

/** `--max-regression 5%` (or `5`): the share of throughput or p99 a run may lose against its baseline. */
export function parseMaxRegression(raw: string): Budget {
  const m = /^(\d+(?:\.\d+)?)\s*%?$/.exec(raw.trim());
  if (!m || Number(m[1]) >= 100) {
    throw hotpathError('HOTPATH_ERR_BUDGET', `--max-regression must be a percentage below 100, e.g. 5%; got ${JSON.stringify(raw)}`, {
      showUsage: true,
      details: { option: 'max-regression', value: raw },
    });
  }
  return { kind: 'regression', text: `max regression ${m[1]}%`, maxShare: Number(m[1]) / 100 };
}
