// A flame graph deeper than the canvas is tall: the canvas height stays capped, the rows
// scroll, and scrolling draws the deep rows (the canvas is redrawn for the visible rows).

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import type { CpuProfile } from '../../../src/profile/cpu-profile.js';
import { writeReportHtml } from '../../../src/report/html/write-report-html.js';
import { MAX_CANVAS_HEIGHT, ROW_HEIGHT } from '../../../src/report/ui/flame/flame-metrics.js';
import { fixtureRun } from './report-fixture.js';
import { hook, launch, openReport, type OpenedReport } from './browser.js';

const DEPTH = 300;

/** A chain root → f1 → … → f300, every sample on the deepest frame. */
function deepProfile(dir: string): CpuProfile {
  const nodes: CpuProfile['nodes'] = [
    { id: 1, callFrame: { functionName: '(root)', scriptId: '0', url: '', lineNumber: -1, columnNumber: -1 }, children: [2] },
  ];
  for (let d = 1; d <= DEPTH; d++) {
    nodes.push({
      id: d + 1,
      callFrame: { functionName: `f${d}`, scriptId: '1', url: `file://${dir}/deep.js`, lineNumber: d, columnNumber: 0 },
      children: d < DEPTH ? [d + 2] : [],
    });
  }
  const n = 200;
  return {
    nodes,
    startTime: 0,
    endTime: n * 1000,
    samples: new Array<number>(n).fill(DEPTH + 1),
    timeDeltas: new Array<number>(n).fill(1000),
  };
}

describe('a flame graph deeper than the canvas', () => {
  let dir: string;
  let browser: Browser;
  let opened: OpenedReport;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'hotpath-deep-'));
    const cpuPath = join(dir, 'deep.cpuprofile');
    writeFileSync(cpuPath, JSON.stringify(deepProfile(dir)));
    const { run, report } = fixtureRun({ dir, cpuPath, heapPath: '', durationMs: 200 }, { heap: false });
    browser = await launch();
    opened = await openReport(browser, await writeReportHtml(run, report));
  });

  after(async () => {
    await browser?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('caps the canvas and scrolls the rows, drawing the deep ones when scrolled', async () => {
    const page = opened.page;
    const sizes = await page.evaluate(() => {
      const doc = (globalThis as unknown as { document: { querySelector(s: string): { clientHeight: number; scrollHeight: number } } })
        .document;
      return { canvas: doc.querySelector('#flame canvas').clientHeight, scroll: doc.querySelector('#flame .flame-scroll').scrollHeight };
    });
    assert.equal(sizes.canvas, MAX_CANVAS_HEIGHT);
    assert.equal(sizes.scroll, (DEPTH + 1) * ROW_HEIGHT);
    const top = (await hook(page)).flame!;
    assert.equal(top.treeNodes, DEPTH + 1);
    assert.equal(top.visibleFrames, Math.ceil(MAX_CANVAS_HEIGHT / ROW_HEIGHT) + 1, 'only the rows in view are drawn');
    await page.evaluate(() => {
      const doc = (globalThis as unknown as { document: { querySelector(s: string): { scrollTop: number } } }).document;
      doc.querySelector('#flame .flame-scroll').scrollTop = 1e9;
    });
    // Two animation frames: the scroll handler schedules the redraw on the next one.
    await page.evaluate(
      () =>
        new Promise((resolve) => {
          const raf = (globalThis as unknown as { requestAnimationFrame(f: () => void): void }).requestAnimationFrame;
          raf(() => raf(() => resolve(null)));
        }),
    );
    // Scrolled to the bottom: the last rows, and the deepest frame under the pointer.
    const canvas = page.locator('#flame canvas').first();
    await canvas.scrollIntoViewIfNeeded();
    const box = (await canvas.boundingBox())!;
    await page.mouse.move(box.x + 50, box.y + box.height - ROW_HEIGHT / 2 - 1);
    assert.match((await page.textContent('.flame-tooltip')) ?? '', new RegExp(`^f${DEPTH}deep\\.js:${DEPTH + 1}`));
  });
});
