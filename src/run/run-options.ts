// The flags of `hotpath run`, declared once as data: every load flag of `hotpath load`
// (the URL aside: the target's own address is detected) plus the run's own. The CLI, the
// programmatic `run()` and docs/run.md all follow this list.

import type { OptionSpec, OptionValues } from '../options/option-spec.js';
import { loadOptionSpecs, type LoadFlags } from '../load/load-options.js';

export const runOwnSpecs = [
  {
    key: 'path',
    flag: 'path',
    type: 'string',
    default: '/',
    valueName: '<path>',
    description: 'Request path (and query) driven at the target',
  },
  {
    key: 'setup',
    flag: 'setup',
    type: 'string',
    valueName: '<scenario.json>',
    description: 'Requests sent once before warm-up and load (same format as --scenario)',
  },
  {
    key: 'out',
    flag: 'out',
    short: 'o',
    type: 'string',
    default: '.hotpath',
    valueName: '<dir>',
    description: 'Where run directories are created',
  },
  {
    key: 'port',
    flag: 'port',
    type: 'integer',
    min: 1,
    max: 65_535,
    valueName: '<port>',
    description: 'Drive the server listening on this port when the target opens several',
    conflicts: ['url'],
  },
  {
    key: 'readyTimeout',
    flag: 'ready-timeout',
    type: 'duration',
    unit: 's',
    min: 0.1,
    max: 3600,
    default: 30,
    valueName: '<time>',
    description: 'How long to wait for the target to start listening',
  },
  {
    key: 'interval',
    flag: 'interval',
    type: 'duration',
    unit: 'ms',
    min: 10,
    max: 60_000,
    default: 100,
    valueName: '<ms>',
    description: 'Telemetry sampling interval',
  },
  {
    key: 'cpuInterval',
    flag: 'cpu-interval',
    type: 'integer',
    min: 100,
    max: 1_000_000,
    valueName: '<µs>',
    description: "CPU profile sampling interval in microseconds (at least 100; default: from the load's duration, 1000-10000)",
  },
  {
    key: 'profile',
    flag: 'profile',
    type: 'boolean',
    default: true,
    description: 'Do not record a CPU profile (telemetry only, lowest overhead)',
  },
  {
    key: 'heap',
    flag: 'heap',
    type: 'boolean',
    default: false,
    description: 'Also sample allocations (who allocates, garbage included) and what stays alive after the load',
  },
  { key: 'hooks', flag: 'hooks', type: 'boolean', default: true, description: 'Do not watch listener, route, timer and sync-API growth' },
  {
    key: 'grace',
    flag: 'grace',
    type: 'duration',
    unit: 's',
    min: 0,
    max: 600,
    default: 5,
    valueName: '<time>',
    description: 'After SIGTERM, how long the target may take to exit before SIGKILL',
  },
  {
    key: 'url',
    flag: 'url',
    type: 'string',
    valueName: '<url>',
    description: 'Drive an already running server at this URL instead of starting one (no agent: outside view only)',
  },
  { key: 'json', flag: 'json', type: 'boolean', default: false, description: 'Print report.json on stdout' },
  {
    key: 'redact',
    flag: 'redact',
    type: 'strings',
    valueName: '<header>',
    description: "Record this header's value as <redacted> in meta.json (repeatable; credentials are redacted anyway)",
  },
  {
    key: 'native',
    flag: 'native',
    type: 'boolean',
    default: false,
    conflicts: ['url'],
    description: 'Also record the target with Linux perf: kernel, libuv, V8 C++ and JS frames in one stack (Linux, perf installed)',
  },
] as const satisfies readonly OptionSpec[];

export const runOptionSpecs = [...loadOptionSpecs, ...runOwnSpecs] as const satisfies readonly OptionSpec[];

/**
 * Options of `run()` (the programmatic API), typed from the declaration: every load flag and the
 * run's own (durations in s, except interval in ms), plus the command that starts the server
 * (omit it with `url`).
 */
export interface RunOptions extends LoadFlags, OptionValues<typeof runOwnSpecs> {
  command?: string[];
}
