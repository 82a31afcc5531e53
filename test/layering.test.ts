// The folders of src/ import one way (docs/architecture.md): options and the error registry at the
// bottom; load, then run-dir → profile → analyze → report, then compare, budget and native; run
// above them, the CLI on top. The agent and hotpath/protect stand alone: the agent imports nothing
// of hotpath (it is bundled into the user's process), protect only the error registry. Anything
// above the load engine may read the agent's protocol types. Checked on the sources, so that
// type-only imports count too.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const src = fileURLToPath(new URL('../../src/', import.meta.url));

/** Lower layers first; a folder may import its own files and those of lower layers. */
const LAYERS: readonly (readonly string[])[] = [
  ['errors', 'redact', 'hotpath-version'],
  ['options'],
  ['load'],
  ['run-dir'],
  ['profile'],
  ['analyze'],
  ['report'],
  ['compare'],
  ['budget'],
  ['experiment'],
  ['native'],
  ['run'],
  ['cli'],
  ['index'],
];

/** Known exceptions, each with its reason; the list only shrinks. */
const EXCEPTIONS: ReadonlyMap<string, string> = new Map<string, string>([]);

const part = (file: string) => file.split('/')[0].replace(/\.[jt]s$/, '');
const rank = (p: string) => LAYERS.findIndex((l) => l.includes(p));

function allowed(from: string, to: string): boolean {
  const a = part(from),
    b = part(to);
  if (a === b) return true;
  if (a === 'agent') return false;
  if (a === 'protect') return to === 'errors.js';
  if (b === 'agent') return rank(a) > rank('load');
  if (b === 'protect') return a === 'index';
  return rank(b) >= 0 && rank(b) < rank(a);
}

test('src/ imports one way: each folder only its own files and lower layers (agent and protect stand alone)', () => {
  const files = readdirSync(src, { recursive: true })
    .map(String)
    .filter((f) => f.endsWith('.ts'));
  assert.ok(files.length > 200, `found the sources (${files.length})`);
  const unknown = [...new Set(files.map(part))].filter((p) => rank(p) < 0 && p !== 'agent' && p !== 'protect');
  assert.deepEqual(unknown, [], 'every folder of src/ has a layer');
  const wrong: string[] = [];
  const used = new Set<string>();
  for (const file of files) {
    const text = readFileSync(join(src, file), 'utf8');
    for (const m of text.matchAll(/^\s*(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/gm)) {
      const spec = m[1] ?? m[2];
      if (!spec.startsWith('.')) continue;
      const to = relative(src, resolve(dirname(join(src, file)), spec));
      const edge = `${file.replace(/\.ts$/, '.js')} -> ${to}`;
      if (EXCEPTIONS.has(edge)) used.add(edge);
      else if (!allowed(file, to)) wrong.push(edge);
    }
  }
  assert.deepEqual(wrong, []);
  assert.deepEqual(
    [...EXCEPTIONS.keys()].filter((e) => !used.has(e)),
    [],
    'an exception that no longer happens is removed from the list',
  );
});
