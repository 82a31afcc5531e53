// Options are declared once, as data (an OptionSpec list per command). The same
// declaration parses the command line, validates and defaults the programmatic API's
// options object, and writes the help text, so the three can never disagree.

import { hotpathError } from '../errors.js';

export type OptionType = 'string' | 'number' | 'integer' | 'boolean' | 'duration' | 'strings';

export interface OptionSpec {
  /** Property name in the options object (camelCase). */
  key: string;
  /** Long flag without the dashes, e.g. `connections` for `--connections`. */
  flag: string;
  /** One-letter alias, e.g. `c` for `-c`. */
  short?: string;
  type: OptionType;
  description: string;
  /** Placeholder shown in help, e.g. `<n>`. */
  valueName?: string;
  default?: unknown;
  /** Inclusive bounds for number, integer and duration options (in the option's unit). */
  min?: number;
  max?: number;
  /** Allowed values for string options. */
  choices?: readonly string[];
  /** Unit of a duration's value: `s` or `ms`. A plain number on the command line is in this unit. */
  unit?: 's' | 'ms';
  /** Extra words accepted as values, mapped to a value (e.g. `auto`). */
  keywords?: Readonly<Record<string, unknown>>;
  /** Options that cannot be used together with this one (by key). */
  conflicts?: readonly string[];
  /** Hidden from the help text (internal or test-only). */
  hidden?: boolean;
}

/** The value an option takes once coerced: its type's, one of its choices, or one of its keywords' values. */
export type OptionValue<S extends OptionSpec> =
  | (S['type'] extends 'boolean'
      ? boolean
      : S['type'] extends 'strings'
        ? string[]
        : S['type'] extends 'string'
          ? S extends { choices: readonly (infer C)[] }
            ? C
            : string
          : number)
  | (S extends { keywords: Readonly<Record<string, infer K>> } ? K : never);

/** The options object a declaration accepts (every option optional), e.g. `OptionValues<typeof loadOptionSpecs>`. */
export type OptionValues<Specs extends readonly OptionSpec[]> = {
  [S in Specs[number] as S['key']]?: OptionValue<S>;
};

/** The options object after `resolveOptions`: an option with a declared default is always there. */
export type ResolvedOptionValues<Specs extends readonly OptionSpec[]> = {
  [S in Specs[number] as S extends { default: unknown } ? S['key'] : never]: OptionValue<S>;
} & {
  [S in Specs[number] as S extends { default: unknown } ? never : S['key']]?: OptionValue<S>;
};

export interface ParsedArgs {
  values: Record<string, unknown>;
  positionals: string[];
  /** Everything after a bare `--`. */
  rest: string[];
  help: boolean;
}

const durationUnits: Record<string, number> = { us: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Parses `10`, `10s`, `500ms`, `2m`, `1.5h` into the spec's unit. */
function parseDuration(spec: OptionSpec, raw: string): number {
  const m = /^(\d+(?:\.\d+)?)(us|ms|s|m|h)?$/.exec(raw.trim());
  if (!m) throw invalid(spec, raw, 'a duration such as 10, 10s, 500ms or 2m');
  const unit = spec.unit ?? 's';
  const ms = Number(m[1]) * durationUnits[m[2] ?? unit];
  return unit === 's' ? ms / 1000 : ms;
}

function invalid(spec: OptionSpec, raw: unknown, expected: string) {
  return hotpathError('HOTPATH_ERR_INVALID_OPTION', `--${spec.flag} must be ${expected}; got ${JSON.stringify(raw)}`, {
    showUsage: true,
    details: { option: spec.flag, value: raw },
  });
}

function checkRange(spec: OptionSpec, n: number, raw: unknown): number {
  if (!Number.isFinite(n)) throw invalid(spec, raw, 'a finite number');
  if (spec.type === 'integer' && !Number.isInteger(n)) throw invalid(spec, raw, 'a whole number');
  const lo = spec.min ?? -Infinity;
  const hi = spec.max ?? Infinity;
  if (n < lo || n > hi) {
    const range = hi === Infinity ? `at least ${lo}` : `between ${lo} and ${hi}`;
    throw invalid(spec, raw, `${range}${spec.unit ? ` ${spec.unit}` : ''}`);
  }
  return n;
}

/** Converts one raw value (string from argv, or any value from the API) to the spec's type. */
export function coerceOption(spec: OptionSpec, raw: unknown): unknown {
  if (typeof raw === 'string' && spec.keywords && raw in spec.keywords) return spec.keywords[raw];
  switch (spec.type) {
    case 'boolean':
      if (typeof raw === 'boolean') return raw;
      if (raw === 'true' || raw === '1') return true;
      if (raw === 'false' || raw === '0') return false;
      throw invalid(spec, raw, 'true or false');
    case 'string':
      if (typeof raw !== 'string' || raw === '') throw invalid(spec, raw, 'a non-empty string');
      if (spec.choices && !spec.choices.includes(raw)) throw invalid(spec, raw, `one of ${spec.choices.join(', ')}`);
      return raw;
    case 'strings': {
      const list = Array.isArray(raw) ? raw : [raw];
      if (!list.every((x) => typeof x === 'string')) throw invalid(spec, raw, 'a list of strings');
      return list;
    }
    case 'number':
    case 'integer': {
      const n = typeof raw === 'number' ? raw : typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : NaN;
      return checkRange(spec, n, raw);
    }
    case 'duration': {
      const n = typeof raw === 'number' ? raw : typeof raw === 'string' ? parseDuration(spec, raw) : NaN;
      return checkRange(spec, n, raw);
    }
  }
}

function findSpec(specs: readonly OptionSpec[], name: string, short: boolean): OptionSpec | undefined {
  return specs.find((s) => (short ? s.short === name : s.flag === name));
}

function unknownOption(arg: string) {
  return hotpathError('HOTPATH_ERR_UNKNOWN_OPTION', `Unknown option ${arg}`, { showUsage: true, details: { option: arg } });
}

/**
 * Parses argv (without the command name) against the command's declared options. With
 * `resolve: false` the values are only converted from argv's strings to their types: the API the
 * command calls (load(), run()) checks them (conflicts, defaults) once, where it is entered.
 */
export function parseArgv(specs: readonly OptionSpec[], argv: readonly string[], { resolve = true } = {}): ParsedArgs {
  const raw: Record<string, unknown> = {};
  const positionals: string[] = [];
  let help = false;
  let i = 0;
  const take = (spec: OptionSpec, inline: string | undefined, arg: string): string => {
    if (inline !== undefined) return inline;
    if (i + 1 >= argv.length) {
      throw hotpathError('HOTPATH_ERR_INVALID_OPTION', `${arg} needs a value`, { showUsage: true, details: { option: spec.flag } });
    }
    return argv[++i];
  };
  const set = (spec: OptionSpec, value: unknown) => {
    if (spec.type === 'strings') raw[spec.key] = [...((raw[spec.key] as unknown[]) ?? []), value];
    else raw[spec.key] = value;
  };
  for (; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--') return finish(specs, raw, positionals, argv.slice(i + 1), help, resolve);
    if (arg === '-h' || arg === '--help') {
      help = true;
      continue;
    }
    if (arg.startsWith('--')) {
      const eq = arg.indexOf('=');
      const name = eq === -1 ? arg.slice(2) : arg.slice(2, eq);
      const inline = eq === -1 ? undefined : arg.slice(eq + 1);
      let spec = findSpec(specs, name, false);
      if (!spec && name.startsWith('no-')) {
        spec = findSpec(specs, name.slice(3), false);
        if (spec?.type === 'boolean' && inline === undefined) {
          raw[spec.key] = false;
          continue;
        }
        throw unknownOption(arg);
      }
      if (!spec) throw unknownOption(arg);
      if (spec.type === 'boolean' && inline === undefined) {
        raw[spec.key] = true;
        continue;
      }
      set(spec, take(spec, inline, arg));
    } else if (arg.startsWith('-') && arg.length > 1 && !/^-\d/.test(arg)) {
      const spec = findSpec(specs, arg[1], true);
      if (!spec) throw unknownOption(arg);
      if (spec.type === 'boolean') {
        if (arg.length > 2) throw unknownOption(arg);
        raw[spec.key] = true;
        continue;
      }
      set(spec, take(spec, arg.length > 2 ? arg.slice(2) : undefined, arg));
    } else {
      positionals.push(arg);
    }
  }
  return finish(specs, raw, positionals, [], help, resolve);
}

function finish(
  specs: readonly OptionSpec[],
  raw: Record<string, unknown>,
  positionals: string[],
  rest: string[],
  help: boolean,
  resolve: boolean,
): ParsedArgs {
  const values = help ? raw : resolve ? resolveOptions(specs, raw) : coerceAll(specs, raw);
  return { values, positionals, rest, help };
}

function coerceAll(specs: readonly OptionSpec[], raw: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(raw))
    out[key] = coerceOption(
      specs.find((s) => s.key === key)!,
      value,
    );
  return out;
}

/**
 * Validates an options object (from the CLI or the programmatic API), converts values to
 * their types, rejects unknown keys and conflicting options, and fills in defaults.
 */
export function resolveOptions<const Specs extends readonly OptionSpec[]>(specs: Specs, input: object): ResolvedOptionValues<Specs>;
export function resolveOptions(specs: readonly OptionSpec[], input: object): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(input)) {
    if (value === undefined) continue;
    const spec = specs.find((s) => s.key === key);
    if (!spec) throw unknownOption(key);
    out[key] = coerceOption(spec, value);
  }
  checkConflicts(specs, out);
  for (const spec of specs) {
    if (!(spec.key in out) && spec.default !== undefined) out[spec.key] = spec.default;
  }
  return out;
}

/**
 * Rejects two options given together that `specs` declare conflicting (a conflict may name a key
 * declared elsewhere, such as a run flag from a budget flag: it is read from `values` all the same).
 */
export function checkConflicts(specs: readonly OptionSpec[], values: Record<string, unknown>): void {
  const given = (key: string) => key in values && values[key] !== undefined;
  for (const spec of specs) {
    if (!given(spec.key)) continue;
    for (const other of spec.conflicts ?? []) {
      if (given(other)) {
        const o = specs.find((s) => s.key === other);
        throw hotpathError('HOTPATH_ERR_INVALID_OPTION', `--${spec.flag} cannot be used with --${o?.flag ?? other}`, {
          showUsage: true,
          details: { option: spec.flag, conflictsWith: o?.flag ?? other },
        });
      }
    }
  }
}

/** The options section of a command's help text, generated from its declaration. */
export function formatOptions(specs: readonly OptionSpec[]): string {
  const rows = specs
    .filter((s) => !s.hidden)
    .map((s) => {
      const names = `${s.short ? `-${s.short}, ` : '    '}--${s.type === 'boolean' && s.default === true ? 'no-' : ''}${s.flag}`;
      const value = s.type === 'boolean' ? '' : ` ${s.valueName ?? '<value>'}`;
      const def = s.default === undefined || s.type === 'boolean' ? '' : ` (default: ${formatDefault(s)})`;
      return [`  ${names}${value}`, `${s.description}${def}`];
    });
  const width = Math.min(34, Math.max(...rows.map((r) => r[0].length)) + 2);
  return rows.map(([l, r]) => (l.length >= width ? `${l}\n${' '.repeat(width)}${r}` : `${l.padEnd(width)}${r}`)).join('\n');
}

function formatDefault(s: OptionSpec): string {
  if (s.keywords) {
    const word = Object.entries(s.keywords).find(([, v]) => v === s.default)?.[0];
    if (word) return word;
  }
  if (s.type === 'duration') return `${s.default}${s.unit ?? 's'}`;
  return Array.isArray(s.default) ? s.default.join(', ') : String(s.default);
}
