// Keeps src/errors.ts and docs/errors.md in step: every code documented, nothing extra.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { errorCodes, hotpathError, isHotpathError } from '../src/errors.js';

const docs = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');

test('every error code is documented in docs/errors.md and every documented code exists', () => {
  const documented = [...docs.matchAll(/^## (HOTPATH_ERR_[A-Z0-9_]+)\s*$/gm)].map((m) => m[1]).sort();
  assert.deepEqual(documented, Object.keys(errorCodes).sort());
});

test('errors are matched by code, not by class', () => {
  const err = hotpathError('HOTPATH_ERR_INVALID_URL', 'bad');
  assert.equal(err.code, 'HOTPATH_ERR_INVALID_URL');
  assert.ok(isHotpathError(err));
  assert.ok(isHotpathError({ code: 'HOTPATH_ERR_INVALID_URL', message: 'from another realm' }));
  assert.ok(!isHotpathError(new Error('plain')));
  assert.ok(!isHotpathError({ code: 'ENOENT' }));
});
