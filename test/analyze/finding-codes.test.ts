// Keeps src/analyze/finding-codes.ts, the analyzers and docs/findings.md in step: every code an
// analyzer writes is registered, every registered code is documented, nothing extra either way.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { findingCodes } from '../../src/analyze/finding-codes.js';

const docs = readFileSync(new URL('../../../docs/findings.md', import.meta.url), 'utf8');
const analyzeDir = fileURLToPath(new URL('../../src/analyze/', import.meta.url));
const registered = Object.keys(findingCodes).sort();

test('every finding code is documented in docs/findings.md and every documented code exists', () => {
  const documented = [...new Set([...docs.matchAll(/`(HOTPATH_(?!ERR_)[A-Z0-9_]+)`/g)].map((m) => m[1]))].sort();
  assert.deepEqual(documented, registered);
});

test('every finding code the analyzers write is registered, and every registered one is written', () => {
  // The built files: `code: 'HOTPATH_...'` in a finding literal, or a named `..._CODE = 'HOTPATH_...'`
  // constant (comments and strings elsewhere do not count).
  const written = new Set<string>();
  for (const file of readdirSync(analyzeDir, { recursive: true })
    .map(String)
    .filter((f) => f.endsWith('.js'))) {
    const text = readFileSync(join(analyzeDir, file), 'utf8');
    for (const m of text.matchAll(/(?:\bcode: |_CODE = )'(HOTPATH_[A-Z0-9_]+)'/g)) written.add(m[1]);
  }
  assert.deepEqual(
    [...written].filter((c) => !(c in findingCodes)),
    [],
    'written but not registered',
  );
  assert.deepEqual(
    registered.filter((c) => !written.has(c)),
    [],
    'registered but never written',
  );
});
