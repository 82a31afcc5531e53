// Writes the measured window as an HdrHistogram interval log (one interval per second,
// values in µs, max column in ms), the format HdrHistogram's tools merge across machines.
// Open-model runs log the service time too, as intervals tagged `service`. Intervals are
// appended as they are merged, so a long run never holds its histograms in memory.

import { appendFileSync, writeFileSync } from 'node:fs';
import * as hdr from 'hdr-histogram-js';
import { hotpathError } from '../errors.js';
import type { IntervalPoint } from './engine.js';

export class HdrLog {
  private failure: unknown;

  /** Creates (truncates) the file at once, so an unwritable path fails before any load. */
  constructor(private readonly path: string) {
    this.write(writeFileSync, '');
  }

  /** Header lines, with the epoch ms the measured window started at. */
  begin(startEpochMs: number): void {
    this.write(appendFileSync, this.format((w) => {
      w.outputLogFormatVersion();
      w.outputComment('hotpath load: latency in microseconds (untagged); service time tagged "service" in open-model runs');
      w.outputStartTime(startEpochMs);
      w.outputLegend();
    }));
  }

  append(p: IntervalPoint): void {
    const from = p.second - 1;
    this.write(appendFileSync, this.format((w) => {
      w.outputIntervalHistogram(p.latency, from, from + p.lengthS, 1000);
      if (p.service !== null) {
        p.service.tag = 'service';
        w.outputIntervalHistogram(p.service, from, from + p.lengthS, 1000);
      }
    }));
  }

  /** The first write failure during the run, as a sentence (appends never throw into the engine). */
  problem(): string | undefined {
    return this.failure === undefined ? undefined : `${this.error(this.failure).message}; the results are complete, the log is not.`;
  }

  private format(fn: (w: hdr.HistogramLogWriter) => void): string {
    let text = '';
    fn(new hdr.HistogramLogWriter((s) => { text += s; }));
    return text;
  }

  private write(fn: typeof writeFileSync | typeof appendFileSync, text: string): void {
    try {
      fn(this.path, text);
    } catch (cause) {
      if (text === '') throw this.error(cause);
      this.failure ??= cause;
    }
  }

  private error(cause: unknown) {
    const code = (cause as NodeJS.ErrnoException).code ?? 'EIO';
    return hotpathError('HOTPATH_ERR_HDR_LOG', `Cannot write the HdrHistogram log ${this.path} (${code})`, { cause, details: { path: this.path } });
  }
}
