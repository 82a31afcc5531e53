// The list of analyzers, in no particular order (analyze-run.ts orders their findings).

import type { Analyzer } from './analyzer.js';

export const analyzers: readonly Analyzer[] = [
];
