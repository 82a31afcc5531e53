// docs/load.md documents every flag `hotpath load` declares, so the reference cannot drift.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { loadCommandSpecs } from '../../src/load/load-options.js';
import { undocumentedFlags } from '../options/documented-flags.js';

const doc = readFileSync(new URL('../../../docs/load.md', import.meta.url), 'utf8');

test('every flag of hotpath load is in docs/load.md', () => {
  assert.deepEqual(undocumentedFlags(loadCommandSpecs, doc), []);
});
