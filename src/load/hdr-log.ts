// Writes the measured window as an HdrHistogram interval log (one interval per second,
// values in µs, max column in ms), the format HdrHistogram's tools merge across machines.
// Open-model runs log the service time too, as intervals tagged `service`.

import { writeFileSync } from 'node:fs';
import * as hdr from 'hdr-histogram-js';
import { hotpathError } from '../errors.js';
import type { IntervalPoint } from './engine.js';

export function hdrLogText(start: number, end: number, intervals: readonly IntervalPoint[]): string {
  let text = '';
  const writer = new hdr.HistogramLogWriter((s) => { text += s; });
  writer.outputLogFormatVersion();
  writer.outputComment('hotpath load: latency in microseconds (untagged); service time tagged "service" in open-model runs');
  writer.outputStartTime(start);
  writer.outputLegend();
  const last = (end - start) / 1000;
  for (const p of intervals) {
    const from = p.second - 1;
    const to = Math.max(from, Math.min(p.second, last));
    writer.outputIntervalHistogram(p.latency, from, to, 1000);
    if (p.service !== null) {
      p.service.tag = 'service';
      writer.outputIntervalHistogram(p.service, from, to, 1000);
    }
  }
  return text;
}

/** Fails early (before any load) when the log cannot be written. */
export function checkHdrLogWritable(path: string): void {
  write(path, '');
}

export function writeHdrLog(path: string, start: number, end: number, intervals: readonly IntervalPoint[]): void {
  write(path, hdrLogText(start, end, intervals));
}

function write(path: string, text: string): void {
  try {
    writeFileSync(path, text);
  } catch (cause) {
    const code = (cause as NodeJS.ErrnoException).code ?? 'EIO';
    throw hotpathError('HOTPATH_ERR_HDR_LOG', `Cannot write the HdrHistogram log ${path} (${code})`, { cause, details: { path } });
  }
}
