// The flags of a declaration that its docs page does not mention: the docs tests of each command
// (run, load) assert this is empty, so a declared flag cannot go undocumented.

import type { OptionSpec } from '../../src/options/option-spec.js';

/** Visible flags (as typed: `--no-x` for a boolean that defaults to true) missing from `doc`. */
export function undocumentedFlags(specs: readonly OptionSpec[], doc: string): string[] {
  return specs
    .filter((s) => !s.hidden)
    .map((s) => `--${s.type === 'boolean' && s.default === true ? 'no-' : ''}${s.flag}`)
    .filter((flag) => !doc.includes(`\`${flag}`) && !doc.includes(`, ${flag}`));
}
