// Lint: type-aware rules that catch what the compiler lets through (a promise nobody awaits,
// code nobody uses), over everything tsc builds plus the agent and the report UI.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'test/fixtures/**', 'examples/**', '**/*.cjs'] },
  {
    files: ['**/*.ts'],
    extends: [js.configs.recommended, ...tseslint.configs.recommended],
    languageOptions: {
      // The agent (CommonJS-safe globals) and the report UI (DOM) have their own compiler settings.
      parserOptions: {
        project: ['./tsconfig.json', './tsconfig.agent.json', './tsconfig.ui.json'],
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': [
        'error',
        {
          allowForKnownSafeCalls: [
            { from: 'package', package: 'node:test', name: ['test', 'it', 'describe', 'suite'] },
            // load()'s run is a promise that also takes listeners: `run.on(...)` chains, it is awaited later.
            { from: 'file', path: 'src/load/load.ts', name: 'on' },
          ],
        },
      ],
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      'no-unused-private-class-members': 'error',
      'no-unreachable': 'error',
      // A `let` that a closure reads before its one assignment cannot be a const.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
      // The agent's hooks wrap functions they do not know the shape of, on purpose.
      '@typescript-eslint/no-unsafe-function-type': 'off',
      '@typescript-eslint/no-this-alias': 'off',
      'prefer-rest-params': 'off',
      // Terminal output strips ANSI escapes with control-character regexps, on purpose.
      'no-control-regex': 'off',
    },
  },
  {
    // The agent loads Node's modules lazily, with require(), so a hook costs nothing until used.
    files: ['src/agent/**/*.ts'],
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // Tests pass async handlers where Node ignores the result (as users do), read untyped JSON
    // and match terminal layouts with literal spaces.
    files: ['test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false } }],
      '@typescript-eslint/no-explicit-any': 'off',
      'no-regex-spaces': 'off',
    },
  },
);
