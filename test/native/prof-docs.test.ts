// docs/prof.md documents every flag `hotpath prof` and `hotpath import` declare.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { profCommand } from '../../src/cli/commands/prof.js';
import { importCommand } from '../../src/cli/commands/import.js';

const doc = readFileSync(new URL('../../../docs/prof.md', import.meta.url), 'utf8');

test('every flag of hotpath prof and hotpath import is in docs/prof.md', () => {
  const missing = [...profCommand.options, ...importCommand.options]
    .filter((s) => !s.hidden)
    .map((s) => `--${s.type === 'boolean' && s.default === true ? 'no-' : ''}${s.flag}`)
    .filter((flag) => !doc.includes(`\`${flag}`) && !doc.includes(`, ${flag}`));
  assert.deepEqual(missing, []);
});
