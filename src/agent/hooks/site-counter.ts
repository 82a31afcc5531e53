// Counts events by call site with bounded cost: a stack is captured for the first
// SAMPLE_FIRST events of a key, then for 1 in SAMPLE_EVERY; unsampled events are added to the
// key's most recent site. Bounded memory: at most MAX_ENTRIES sites are kept.
import type { CallSite } from '../protocol.js';
import { captureStack, siteKey } from './call-site.js';

export const SAMPLE_FIRST = 64;
export const SAMPLE_EVERY = 64;
export const MAX_ENTRIES = 500;

export interface SiteEntry<T> {
  /** The key the event was counted under (without the site). */
  key: string;
  site?: CallSite;
  stack?: CallSite[];
  count: number;
  data: T;
}

export class SiteCounter<T> {
  readonly entries = new Map<string, SiteEntry<T>>();
  private readonly perKey = new Map<string, { hits: number; last: SiteEntry<T> | undefined }>();
  overflow = 0;

  /** `every`: past the first SAMPLE_FIRST events of a key, a stack is captured for 1 in this many. */
  constructor(
    private readonly init: () => T,
    private readonly every = SAMPLE_EVERY,
  ) {}

  /**
   * Counts one event of `key`, called from a hook whose frame (and above) is `skip`. `machinery`
   * marks frames that belong to the hooked library itself: the site is the first frame that is
   * not (the stack keeps them all). `dropMachinery`: the stack drops them too, searched deeper
   * (a library whose own frames are many: undici's dispatch chain).
   */
  hit(key: string, skip: Function, machinery?: (file: string) => boolean, dropMachinery = false): SiteEntry<T> | undefined {
    let k = this.perKey.get(key);
    if (k === undefined) {
      if (this.perKey.size >= MAX_ENTRIES) return void this.overflow++;
      k = { hits: 0, last: undefined };
      this.perKey.set(key, k);
    }
    const sample = k.hits < SAMPLE_FIRST || k.hits % this.every === 0 || k.last === undefined;
    k.hits++;
    if (!sample) {
      k.last!.count++;
      return k.last;
    }
    const stack = captureStack(skip, dropMachinery ? machinery : undefined);
    const site = machinery === undefined ? stack[0] : (stack.find((f) => !machinery(f.file)) ?? stack[0]);
    const full = `${key}\0${siteKey(site)}`;
    let e = this.entries.get(full);
    if (e === undefined) {
      if (this.entries.size >= MAX_ENTRIES) {
        this.overflow++;
        return k.last;
      }
      e = { key, count: 0, data: this.init() };
      if (site !== undefined) {
        e.site = site;
        e.stack = stack;
      }
      this.entries.set(full, e);
    }
    e.count++;
    k.last = e;
    return e;
  }
}

/** Copies site and stack onto a protocol entry when known. */
export function withSite<R extends object>(
  row: R,
  e: { site?: CallSite; stack?: CallSite[] },
): R & { site?: CallSite; stack?: CallSite[] } {
  const out: R & { site?: CallSite; stack?: CallSite[] } = row;
  if (e.site !== undefined) out.site = e.site;
  if (e.stack !== undefined) out.stack = e.stack;
  return out;
}
