// report.html of perf's native stacks (`hotpath import`, as `run --native` writes them) in real
// headless Chromium: the kernel is a layer of its own beside native, shown, hidden and coloured
// like the others.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser } from 'playwright-core';
import { importPerfScript } from '../../../src/native/import-perf.js';
import { hook, launch, openReport, type OpenedReport } from './browser.js';

const fixture = fileURLToPath(new URL('../../../../test/fixtures/perf/node-server.perf', import.meta.url));

describe('report.html of native stacks in headless Chromium: the kernel layer', () => {
  let browser: Browser;
  let dir: string;
  let opened: OpenedReport;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'hotpath-kernel-layer-'));
    const imported = await importPerfScript(fixture, { cwd: dir, out: join(dir, 'out') });
    // Frames keep their layer in the run's hotspots too: no kernel frame is a native one.
    assert.ok(!imported.report.hotspots.some((h) => h.kind === 'native' && h.function.endsWith(' [kernel]')));
    browser = await launch();
    opened = await openReport(browser, join(imported.dir, 'report.html'));
  });

  after(async () => {
    await browser?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('has a kernel layer toggle beside native; hiding it merges kernel frames into their callers', async () => {
    const page = opened.page;
    assert.deepEqual(opened.consoleErrors, []);
    const layers = await page
      .locator('#flame input[data-layer]')
      .evaluateAll((els) => els.map((e) => (e as unknown as { dataset: { layer: string } }).dataset.layer));
    assert.ok(layers.includes('kernel') && layers.includes('native'), layers.join(', '));
    const before = (await hook(page)).flame!;
    await page.uncheck('#flame input[data-layer="kernel"]');
    const hidden = (await hook(page)).flame!;
    assert.deepEqual(hidden.hiddenLayers.sort(), ['idle', 'kernel']);
    assert.ok(hidden.treeNodes < before.treeNodes, `${hidden.treeNodes} < ${before.treeNodes}`);
    assert.ok(Math.abs(hidden.totalShown - before.totalShown) < 1e-6, 'merging keeps the time');
    // Hiding native too merges more; the kernel's frames were not part of native's.
    await page.uncheck('#flame input[data-layer="native"]');
    const both = (await hook(page)).flame!;
    assert.ok(both.treeNodes < hidden.treeNodes, `${both.treeNodes} < ${hidden.treeNodes}`);
    await page.check('#flame input[data-layer="native"]');
    await page.check('#flame input[data-layer="kernel"]');
    assert.equal((await hook(page)).flame!.treeNodes, before.treeNodes);
  });

  it('kernel frames are drawn and found by search', async () => {
    const page = opened.page;
    await page.fill('#flame input[type=search]', '[kernel]');
    await page.waitForFunction(
      () => (globalThis as unknown as { __hotpath: { flame: { searchShare: number | null } } }).__hotpath.flame.searchShare !== null,
    );
    const share = (await hook(page)).flame!.searchShare!;
    assert.ok(share > 0, `kernel frames hold ${share} of the shown time`);
  });
});
