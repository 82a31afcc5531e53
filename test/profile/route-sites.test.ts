import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { enclosingFunctionName, findRouteSites, routeFragments, routePathText } from '../../src/profile/route-sites.js';

test("route sites: a route regexp's literal path, Express 4 and Express 5 forms", () => {
  assert.equal(routePathText('^\\/stores\\/category-3935(?:\\/([^/]+?))\\/?$'), '/stores/category-3935//');
  assert.equal(routePathText('^(?:\\/t\\/store-930\\/shop\\/([^\\/]+))(?:\\/$)?$'), '/t/store-930/shop//');
});

test('route sites: the fragments most caught patterns share, not the parts that vary per route', () => {
  const express4 = ['stores', 'shop', 'blog', 'help'].map((s, i) => `^\\/${s}\\/category-${100 + i}(?:\\/([^/]+?))\\/?$`);
  assert.deepEqual(routeFragments(express4), ['category-']);
  const express5 = ['about', 'shop', 'faq'].map((k, i) => `^(?:\\/t\\/store-${i}\\/${k}\\/([^\\/]+))(?:\\/$)?$`);
  assert.deepEqual(routeFragments(express5), ['store-']);
  // Routes with nothing in common (an app's own few dozen) give nothing to search for.
  assert.deepEqual(routeFragments(['^\\/users\\/?$', '^\\/orders\\/?$', '^\\/carts\\/?$']), []);
});

test('route sites: the one line of the app writing the fragments; none when several places could', () => {
  const dir = mkdtempSync(join(tmpdir(), 'route-sites-'));
  try {
    mkdirSync(join(dir, 'lib'));
    mkdirSync(join(dir, 'node_modules', 'x'), { recursive: true });
    writeFileSync(
      join(dir, 'lib', 'redirects.js'),
      'function add(app) {\n  for (const s of S) app.get(`/${s}/category-${i}/:slug`, go);\n}\n',
    );
    writeFileSync(join(dir, 'node_modules', 'x', 'index.js'), "// '/category-' in a dependency is not the app's\n");
    const sites = findRouteSites(dir, ['category-']);
    assert.equal(sites.length, 1);
    assert.equal(sites[0].path, join(dir, 'lib', 'redirects.js'));
    assert.equal(sites[0].line, 2);
    for (let i = 0; i < 4; i++) writeFileSync(join(dir, `other${i}.js`), "const label = 'category-';\n");
    assert.deepEqual(findRouteSites(dir, ['category-']), []);
    assert.deepEqual(findRouteSites(dir, []), []);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('route sites: the function a line lies in, read from the source', () => {
  const text = [
    "'use strict';",
    'function registerLegacyRedirects(app) {',
    '  for (let i = 0; i < 6000; i++) {',
    '    const from = `/shop/category-${i}/:slug`;',
    '    app.get(from, go);',
    '  }',
    '}',
    'const mount = (app) => {',
    '  if (ready) {',
    '    app.get(`/t/store-${t}/:page`, page);',
    '  }',
    '};',
    "app.get('/top-level', h);",
  ].join('\n');
  assert.equal(enclosingFunctionName(text, 4), 'registerLegacyRedirects');
  assert.equal(enclosingFunctionName(text, 10), 'mount');
  assert.equal(enclosingFunctionName(text, 13), undefined);
});
