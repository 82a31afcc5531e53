// report.html of a real `hotpath run` (the CLI, a real server under the agent, real load):
// the page opens offline without errors and shows that run's diagnosis, timeline and its
// CPU and allocation profiles, with the hot function findable in the flame graph.

import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Browser } from 'playwright-core';
import { hook, launch, openReport, type OpenedReport } from './browser.js';

const CLI = fileURLToPath(new URL('../../../src/cli/main.js', import.meta.url));

const SERVER = `'use strict';
const http = require('node:http');
const crypto = require('node:crypto');
function hashPassword(pw) {
  return crypto.pbkdf2Sync(pw, 'salt', 1000, 64, 'sha512');
}
http.createServer((req, res) => {
  hashPassword('secret');
  res.end('ok');
}).listen(0, '127.0.0.1');
`;

describe('report.html of a real hotpath run', () => {
  let dir: string;
  let runDir: string;
  let browser: Browser;
  let opened: OpenedReport;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'hotpath-real-report-'));
    writeFileSync(join(dir, 'server.js'), SERVER);
    execFileSync(process.execPath, [CLI, 'run', '-d', '2s', '-c', '4', '--heap', '--', process.execPath, 'server.js'], {
      cwd: dir,
      timeout: 60_000,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const runs = readdirSync(join(dir, '.hotpath'));
    assert.equal(runs.length, 1);
    runDir = join(dir, '.hotpath', runs[0]);
    browser = await launch();
    opened = await openReport(browser, join(runDir, 'report.html'));
  });

  after(async () => {
    await browser?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('opens offline without errors and shows every section', async () => {
    const state = await hook(opened.page);
    assert.deepEqual(state.errors, []);
    assert.deepEqual(opened.consoleErrors, []);
    assert.deepEqual(opened.requests, [pathToFileURL(join(runDir, 'report.html')).href]);
    assert.deepEqual(state.sections, ['diagnosis', 'timeline', 'load', 'flame']);
    assert.ok(state.timelineCharts >= 5);
  });

  it('shows the findings of report.json', async () => {
    const report = JSON.parse(readFileSync(join(runDir, 'report.json'), 'utf8')) as { findings: { title: string }[] };
    assert.equal(await opened.page.locator('.finding').count(), report.findings.length);
    for (const f of report.findings) assert.ok((await opened.page.textContent('#diagnosis'))?.includes(f.title));
  });

  it('finds the hot function in the CPU profile and shows the allocation profile', async () => {
    const page = opened.page;
    await page.fill('#flame input[type=search]', 'hashPassword');
    await page.waitForFunction(
      () => (globalThis as unknown as { __hotpath: { flame: { searchShare: number | null } } }).__hotpath.flame.searchShare !== null,
    );
    const share = (await hook(page)).flame!.searchShare!;
    assert.ok(share > 0.2, `hashPassword share of the shown CPU time: ${share}`);
    const labels = await page.locator('#flame select option').allTextContents();
    assert.ok(labels.some((l) => l.startsWith('CPU')) && labels.some((l) => l.startsWith('Allocations')), labels.join(', '));
  });
});
