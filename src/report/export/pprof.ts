// pprof (google/pprof profile.proto), gzipped, via the pure-JS pprof-format encoder; read by
// `go tool pprof`, Pyroscope and Grafana. CPU: sample types samples/count and cpu/nanoseconds,
// period = the measured mean interval. Heap: alloc_space/bytes. Location ids are leaf first
// in each sample; one function (name, filename, start_line) and one location per frame;
// string table index 0 is "" (pprof-format's StringTable guarantees it).

import { gzipSync } from 'node:zlib';
import { Function as PFunction, Line, Location, Mapping, Profile, Sample, StringTable, ValueType } from 'pprof-format';
import type { StackSamples } from '../../profile/stack-samples.js';

export interface PprofOptions {
  /** Epoch ms at which the profile window starts (time_nanos). */
  startEpochMs?: number;
  /** Free-text comments (the command, the run dir). */
  comments?: string[];
}

function cpuProfile(samples: StackSamples, strings: StringTable) {
  const count = samples.count.reduce((a, b) => a + b, 0);
  const meanNs = count > 0 ? Math.round((samples.total / count) * 1000) : 1_000_000;
  return {
    sampleType: [
      new ValueType({ type: strings.dedup('samples'), unit: strings.dedup('count') }),
      new ValueType({ type: strings.dedup('cpu'), unit: strings.dedup('nanoseconds') }),
    ],
    periodType: new ValueType({ type: strings.dedup('cpu'), unit: strings.dedup('nanoseconds') }),
    period: meanNs,
    values: (s: number) => [samples.count[s], Math.round(samples.weight[s] * 1000)],
  };
}

function heapProfile(samples: StackSamples, strings: StringTable) {
  return {
    sampleType: [new ValueType({ type: strings.dedup('alloc_space'), unit: strings.dedup('bytes') })],
    periodType: new ValueType({ type: strings.dedup('space'), unit: strings.dedup('bytes') }),
    period: 0,
    values: (s: number) => [Math.round(samples.weight[s])],
  };
}

/** Builds the (not yet encoded) pprof Profile. */
export function toPprofProfile(samples: StackSamples, options: PprofOptions = {}): Profile {
  const strings = new StringTable();
  const kind = samples.unit === 'bytes' ? heapProfile(samples, strings) : cpuProfile(samples, strings);
  // Location and function ids equal the frame index (frame 0, the root, is never used).
  const functions = samples.frames.slice(1).map(
    (f, k) =>
      new PFunction({
        id: k + 1,
        name: strings.dedup(f.name),
        systemName: strings.dedup(f.name),
        filename: strings.dedup(f.file),
        startLine: f.line,
      }),
  );
  const locations = samples.frames.slice(1).map(
    (f, k) =>
      new Location({
        id: k + 1,
        mappingId: 1,
        line: [new Line({ functionId: k + 1, line: f.line, column: f.column })],
      }),
  );
  const sample: Sample[] = [];
  for (let s = 0; s < samples.stacks.length; s++) {
    sample.push(new Sample({ locationId: [...samples.stacks[s]].reverse(), value: kind.values(s) }));
  }
  // One mapping for the whole process, so pprof knows functions and lines are symbolized.
  const mapping = [new Mapping({ id: 1, filename: strings.dedup('node'), hasFunctions: true, hasFilenames: true, hasLineNumbers: true })];
  const comment = (options.comments ?? []).map((c) => strings.dedup(c));
  return new Profile({
    sampleType: kind.sampleType,
    sample,
    mapping,
    location: locations,
    function: functions,
    stringTable: strings,
    periodType: kind.periodType,
    period: kind.period,
    comment,
    timeNanos: options.startEpochMs === undefined ? 0 : BigInt(Math.round(options.startEpochMs * 1e6)),
    durationNanos: samples.unit === 'bytes' ? 0 : Math.round((samples.endUs - samples.startUs) * 1000),
  });
}

/** The gzipped protobuf bytes of a `.pb.gz` file. */
export function toPprof(samples: StackSamples, options: PprofOptions = {}): Buffer {
  return gzipSync(toPprofProfile(samples, options).encode());
}
