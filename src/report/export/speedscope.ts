// speedscope's file format (https://www.speedscope.app/file-format-schema.json): shared
// frames and one sampled profile. CPU profiles keep every sample in time order with its
// weight in µs (speedscope's time-order view works); heap trees become one sample per stack
// with bytes as weight.

import type { StackSamples } from '../../profile/stack-samples.js';

export interface SpeedscopeFile {
  $schema: 'https://www.speedscope.app/file-format-schema.json';
  shared: { frames: { name: string; file?: string; line?: number; col?: number }[] };
  profiles: {
    type: 'sampled';
    name: string;
    unit: 'microseconds' | 'bytes';
    startValue: number;
    endValue: number;
    samples: number[][];
    weights: number[];
  }[];
  activeProfileIndex: number;
  exporter: string;
  name: string;
}

export function toSpeedscope(samples: StackSamples, options: { name: string; exporter: string }): SpeedscopeFile {
  // speedscope frame indexes are 0-based over shared.frames; our frame 0 is the root, left out.
  const frames = samples.frames.slice(1).map((f) => ({
    name: f.name,
    ...(f.file ? { file: f.file } : {}),
    ...(f.line > 0 ? { line: f.line } : {}),
    ...(f.column > 0 ? { col: f.column } : {}),
  }));
  const shifted = samples.stacks.map((s) => s.map((f) => f - 1));
  let stacks: number[][];
  let weights: number[];
  if (samples.timeline) {
    stacks = Array.from(samples.timeline.stack, (s) => shifted[s]);
    weights = Array.from(samples.timeline.weight);
  } else {
    stacks = shifted;
    weights = samples.weight;
  }
  return {
    $schema: 'https://www.speedscope.app/file-format-schema.json',
    shared: { frames },
    profiles: [
      {
        type: 'sampled',
        name: options.name,
        unit: samples.unit === 'bytes' ? 'bytes' : 'microseconds',
        startValue: 0,
        endValue: weights.reduce((a, b) => a + b, 0),
        samples: stacks,
        weights,
      },
    ],
    activeProfileIndex: 0,
    exporter: options.exporter,
    name: options.name,
  };
}
