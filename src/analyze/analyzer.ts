// The one signature every analyzer implements: a pure function from a run to its findings.

import type { RunData } from '../run-dir/run-data.js';
import type { Finding } from './finding.js';

export type Analyzer = (run: RunData) => Finding[];
