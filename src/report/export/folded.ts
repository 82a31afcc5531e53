// Brendan Gregg's folded (collapsed) stacks: one line per unique stack, `root;…;leaf weight`,
// read by flamegraph.pl, inferno, speedscope and Pyroscope. Weights are integer µs for CPU
// profiles (bytes for heap), so the lines sum to the profile's total. A `;` inside a frame
// name would split the frame, so it is written as `%3B` (and `%` as `%25`); line breaks
// become spaces.

import type { StackSamples } from '../../profile/stack-samples.js';
import { frameLabel } from './frame-label.js';

export function escapeFoldedFrame(label: string): string {
  return label
    .replace(/%/g, '%25')
    .replace(/;/g, '%3B')
    .replace(/[\r\n]+/g, ' ');
}

/** Renders the stacks; integer weights are kept exact, fractional ones rounded. */
export function toFolded(samples: StackSamples): string {
  return [...foldedChunks(samples)].join('');
}

/** The same text in chunks of lines, so a large profile is written without one string of it all. */
export function* foldedChunks(samples: StackSamples, linesPerChunk = 1000): Generator<string> {
  const labels = samples.frames.map((f) => escapeFoldedFrame(frameLabel(f)));
  let lines: string[] = [];
  for (let s = 0; s < samples.stacks.length; s++) {
    const w = Math.round(samples.weight[s]);
    if (w <= 0) continue;
    lines.push(`${samples.stacks[s].map((f) => labels[f]).join(';')} ${w}\n`);
    if (lines.length >= linesPerChunk) {
      yield lines.join('');
      lines = [];
    }
  }
  if (lines.length > 0) yield lines.join('');
}
