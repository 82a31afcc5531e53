// Writes the measured window as an HdrHistogram interval log (one interval per second,
// values in µs, max column in ms), the format HdrHistogram's tools merge across machines.
// Open-model runs log the service time too, as intervals tagged `service`. Intervals are
// appended as they are merged, so a long run never holds its histograms in memory.

import { accessSync, appendFileSync, constants, statSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import * as hdr from 'hdr-histogram-js';
import { hotpathError } from '../errors.js';
import type { IntervalPoint } from './engine.js';

/**
 * Whether the log can be written at `path`, without creating or truncating it (for `hotpath
 * run`, which checks before it starts anything): HOTPATH_ERR_HDR_LOG when it cannot.
 */
export function checkHdrLogPath(path: string): void {
  let problem: string | undefined;
  try {
    const st = statSync(path, { throwIfNoEntry: false });
    if (st?.isDirectory()) problem = 'EISDIR';
    else accessSync(st === undefined ? dirname(path) : path, constants.W_OK);
    if (st === undefined && !statSync(dirname(path)).isDirectory()) problem = 'ENOTDIR';
  } catch (err) {
    problem = (err as NodeJS.ErrnoException).code ?? 'EIO';
  }
  if (problem !== undefined) {
    throw hotpathError('HOTPATH_ERR_HDR_LOG', `Cannot write the HdrHistogram log ${path} (${problem})`, { details: { path } });
  }
}

export class HdrLog {
  private failure: unknown;

  /** Creates (truncates) the file at once, so an unwritable path fails before any load. */
  constructor(private readonly path: string) {
    this.write(writeFileSync, '');
  }

  /** Header lines, with the epoch ms the measured window started at. */
  begin(startEpochMs: number): void {
    this.write(
      appendFileSync,
      this.format((w) => {
        w.outputLogFormatVersion();
        w.outputComment('hotpath load: latency in microseconds (untagged); service time tagged "service" in open-model runs');
        w.outputStartTime(startEpochMs);
        w.outputLegend();
      }),
    );
  }

  append(p: IntervalPoint): void {
    const from = p.second - 1;
    this.write(
      appendFileSync,
      this.format((w) => {
        w.outputIntervalHistogram(p.latency, from, from + p.lengthS, 1000);
        if (p.service !== null) {
          p.service.tag = 'service';
          w.outputIntervalHistogram(p.service, from, from + p.lengthS, 1000);
        }
      }),
    );
  }

  /** The first write failure during the run, as a sentence (appends never throw into the engine). */
  problem(): string | undefined {
    return this.failure === undefined ? undefined : `${this.error(this.failure).message}; the results are complete, the log is not.`;
  }

  private format(fn: (w: hdr.HistogramLogWriter) => void): string {
    let text = '';
    fn(
      new hdr.HistogramLogWriter((s) => {
        text += s;
      }),
    );
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
    return hotpathError('HOTPATH_ERR_HDR_LOG', `Cannot write the HdrHistogram log ${this.path} (${code})`, {
      cause,
      details: { path: this.path },
    });
  }
}
