// Test helper: opens a report.html in real headless Chromium (Debian's package, driven by
// playwright-core) and records console errors and every request the page makes.

import { existsSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import type { HotpathHook } from '../../../src/report/ui/hook-state.js';

export const CHROMIUM = process.env.HOTPATH_CHROMIUM ?? '/usr/bin/chromium';
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export async function launch(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`Chromium is not installed at ${CHROMIUM} (apt-get install chromium; .ci/run does it)`);
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, timeout: 30_000 });
}

export interface OpenedReport {
  page: Page;
  consoleErrors: string[];
  requests: string[];
}

/** Opens the report and waits until the page says it is ready (or failed). */
export async function openReport(
  browser: Browser,
  file: string,
  hash = '',
  viewport = { width: 1280, height: 900 },
): Promise<OpenedReport> {
  const page = await browser.newPage({ viewport });
  const consoleErrors: string[] = [];
  const requests: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') consoleErrors.push(m.text());
  });
  page.on('pageerror', (e) => consoleErrors.push(String(e)));
  page.on('request', (r) => requests.push(r.url()));
  await page.goto(pathToFileURL(file).href + hash);
  await page.waitForFunction(
    () => {
      const h = (globalThis as unknown as { __hotpath?: { ready: boolean; errors: string[] } }).__hotpath;
      return h !== undefined && (h.ready || h.errors.length > 0);
    },
    undefined,
    { timeout: 20_000 },
  );
  return { page, consoleErrors, requests };
}

/** The page's read-only test hook. */
export async function hook<T = HookState>(page: Page): Promise<T> {
  return page.evaluate(() => (globalThis as unknown as { __hotpath: unknown }).__hotpath) as Promise<T>;
}

/** The page's hook, as the page defines it. */
export type HookState = HotpathHook;
