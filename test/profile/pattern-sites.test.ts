// findPatternSites: a hot regexp's source (as V8 names its frame) found in the app's own files,
// written as a literal or as a string with doubled backslashes; dependencies, dot-directories and
// a compiled copy beside the source are left out.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findPatternSites, patternNeedles } from '../../src/profile/pattern-sites.js';

function tree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'hotpath-pattern-'));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

const rel = (root: string, sites: { path: string; line: number }[]) =>
  sites.map((s) => `${s.path.slice(root.length + 1)}:${s.line}`).sort();

test('a pattern is found as a JS string, a JSON string and a regexp literal, each with its own escaping', () => {
  const source = '^(\\w+\\s?)*$'; // V8's frame: "RegExp: ^(\w+\s?)*$"
  const root = tree({
    'lib/profile-routes.js': "'use strict';\n\n// Display names\nconst DISPLAY_NAME = '^(\\\\w+\\\\s?)*$';\n",
    'schemas/user.json': '{\n  "type": "object",\n  "properties": { "name": { "pattern": "^(\\\\w+\\\\s?)*$" } }\n}\n',
    'lib/check.mjs': 'export const ok = (s) => /^(\\w+\\s?)*$/.test(s);\n',
    // Not the app's: a dependency, a dot-directory (a run directory), a longer pattern that contains it.
    'node_modules/lib/index.js': "module.exports = '^(\\\\w+\\\\s?)*$';\n",
    '.hotpath/x/report.json': '"^(\\\\w+\\\\s?)*$"',
    'lib/other.js': "const LONGER = '^(\\\\w+\\\\s?)*$|^admin$';\n",
  });
  try {
    assert.deepEqual(rel(root, findPatternSites(root, source)), ['lib/check.mjs:1', 'lib/profile-routes.js:4', 'schemas/user.json:3']);
    const [site] = findPatternSites(root, source).filter((s) => s.path.endsWith('profile-routes.js'));
    assert.equal(site.column, "const DISPLAY_NAME = '".length + 1);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('a slash escaped in the regexp source is a plain slash in a string', () => {
  const needles = patternNeedles('^\\/api\\/(\\d+)$');
  assert.ok(needles.some((n) => n.open === '/' && n.text === '^\\/api\\/(\\d+)$'));
  assert.ok(needles.some((n) => n.open === "'" && n.text === '^/api/(\\\\d+)$'));
  const root = tree({ 'routes.js': "const route = new RegExp('^/api/(\\\\d+)$');\n" });
  try {
    assert.deepEqual(rel(root, findPatternSites(root, '^\\/api\\/(\\d+)$')), ['routes.js:1']);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('a compiled copy in dist/ is left out when the source writes the pattern too', () => {
  const root = tree({
    'src/validate.ts': 'export const EMAIL = /^([a-z0-9]+\\.?)*@example\\.com$/;\n',
    'dist/validate.js': 'exports.EMAIL = /^([a-z0-9]+\\.?)*@example\\.com$/;\n',
  });
  try {
    assert.deepEqual(rel(root, findPatternSites(root, '^([a-z0-9]+\\.?)*@example\\.com$')), ['src/validate.ts:1']);
    rmSync(join(root, 'src'), { recursive: true });
    // Only the build output writes it: that is where it is.
    assert.deepEqual(rel(root, findPatternSites(root, '^([a-z0-9]+\\.?)*@example\\.com$')), ['dist/validate.js:1']);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
