// Builds everything `npm test`, `npm run demo` and the published package need:
//  1. tsc type-checks and emits src/, test/ and benchmarks/ to dist/ (ESM);
//  2. the agent is type-checked on its own and bundled by esbuild into plain,
//     dependency-free CommonJS files (it is preloaded into user apps);
//  3. the report UI is type-checked against the DOM and bundled into one script
//     that report/ inlines, with the data, into each report.html.
import { execFileSync } from 'node:child_process';
import { rmSync, mkdirSync, existsSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const tsc = require.resolve('typescript/bin/tsc');
const esbuild = require('esbuild');

/** Every bundle the package ships. `entry` is relative to the repository root. */
export const bundles = [
  // The in-process agent: the stub NODE_OPTIONS preloads into the target, the agent it loads
  // where it runs, and the agent's worker (each found next to the stub at run time).
  { entry: 'src/agent/preload.ts', outfile: 'dist/agent/hotpath-agent.cjs', platform: 'node', format: 'cjs' },
  { entry: 'src/agent/start-agent.ts', outfile: 'dist/agent/agent-core.cjs', platform: 'node', format: 'cjs' },
  { entry: 'src/agent/worker/agent-worker.ts', outfile: 'dist/agent/agent-worker.cjs', platform: 'node', format: 'cjs' },
  // The report UI; its CSS imports (uPlot's and ours) land beside it in report.css.
  { entry: 'src/report/ui/main.ts', outfile: 'dist/report-ui/report.js', platform: 'browser', format: 'iife', minify: true },
  // compare.html's UI (the differential flame graph), built from the same parts.
  { entry: 'src/report/ui/compare-main.ts', outfile: 'dist/report-ui/compare.js', platform: 'browser', format: 'iife', minify: true },
];

function hasTs(dir) {
  return existsSync(dir) && readdirSync(dir, { recursive: true }).some((f) => String(f).endsWith('.ts'));
}

// HOTPATH_BUILD_LENIENT=1 reports type errors but still emits and bundles (tsc emits
// despite errors): useful while several people edit the tree at once. CI is never lenient.
const lenient = process.env.HOTPATH_BUILD_LENIENT === '1' && !process.env.CI;
let typeErrors = false;

function run(cmd, args) {
  try {
    execFileSync(process.execPath, [cmd, ...args], { cwd: root, stdio: 'inherit' });
  } catch {
    typeErrors = true;
    if (!lenient) {
      console.error(`build: ${args.join(' ')} reported errors (above)`);
      process.exit(1);
    }
  }
}

rmSync(join(root, 'dist'), { recursive: true, force: true });
mkdirSync(join(root, 'dist'), { recursive: true });
run(tsc, ['-p', 'tsconfig.json']);
// The agent and the UI have their own compiler settings (CommonJS-safe globals, DOM).
for (const [extra, dir] of [
  ['tsconfig.agent.json', 'src/agent'],
  ['tsconfig.ui.json', 'src/report/ui'],
]) {
  if (hasTs(join(root, dir))) run(tsc, ['-p', extra]);
}
for (const b of bundles) {
  if (!existsSync(join(root, b.entry))) throw new Error(`build: bundle entry ${b.entry} is missing`);
  esbuild.buildSync({
    entryPoints: [join(root, b.entry)],
    outfile: join(root, b.outfile),
    bundle: true,
    platform: b.platform,
    format: b.format,
    target: b.platform === 'node' ? 'node20' : 'chrome110',
    minify: b.minify ?? false,
    legalComments: 'none',
    logLevel: 'warning',
    ...(b.platform === 'node' ? { external: [] } : {}),
  });
}

if (typeErrors) console.error('build: finished with type errors (lenient mode)');
