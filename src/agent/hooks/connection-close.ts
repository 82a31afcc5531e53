// Where the app sets a `Connection: close` response header: the reason a server closes every
// connection the clients meant to reuse. Nothing is patched until the HTTP collector sees such
// a response (armCloseSites); then ServerResponse's setHeader and writeHead are wrapped for
// at most ARM_MS or MAX_CAPTURES calls that set the header, and restored: no cost on the
// request path of a server that keeps its connections.
import * as http from 'node:http';
import type { GrowthBody, GrowthHook } from './growth-hooks.js';
import { SiteCounter } from './site-counter.js';
import { defineLike } from './wrap.js';
import { originalSetTimeout } from '../originals.js';
import { safely } from '../safe.js';

/** How long the wrappers stay after the first closing response, ms. */
export const ARM_MS = 2000;
/** Calls that set the header recorded before the wrappers go. */
export const MAX_CAPTURES = 64;

type Headers = Record<string, unknown> | unknown[];

const closes = (name: unknown, value: unknown): boolean =>
  typeof name === 'string' && name.length === 10 && name.toLowerCase() === 'connection' && /close/i.test(String(value));

function headersClose(h: Headers | undefined): boolean {
  if (h === undefined || h === null || typeof h !== 'object') return false;
  if (Array.isArray(h)) {
    // [name, value, name, value...] or [[name, value], ...]
    for (let i = 0; i < h.length; i++) {
      const e = h[i];
      if (Array.isArray(e) ? closes(e[0], e[1]) : i % 2 === 0 && closes(e, h[i + 1])) return true;
    }
    return false;
  }
  for (const k of Object.keys(h)) if (closes(k, h[k])) return true;
  return false;
}

const inDependency = (file: string) => /[\\/]node_modules[\\/]/.test(file);

let instance: ConnectionCloseSites | undefined;

/** Called by the HTTP collector when a response it saw closed its connection on the app's header. */
export function armCloseSites(): void {
  instance?.arm();
}

export class ConnectionCloseSites implements GrowthHook {
  private readonly sites = new SiteCounter(() => ({}));
  private state: 'idle' | 'armed' | 'done' = 'idle';
  private captures = 0;
  private restore: (() => void) | undefined;

  install(): void {
    instance = this;
  }

  arm(): void {
    if (this.state !== 'idle') return;
    this.state = 'armed';
    const proto = http.ServerResponse.prototype as unknown as Record<string, Function>;
    const ownSet = Object.prototype.hasOwnProperty.call(proto, 'setHeader');
    const originalSet = proto.setHeader;
    const originalWriteHead = proto.writeHead;
    const self = this;
    const setHeader = function (this: unknown, name: unknown, value: unknown): unknown {
      if (closes(name, value)) self.hit(setHeader);
      return originalSet.apply(this, arguments as unknown as unknown[]);
    };
    const writeHead = function (this: unknown, _status: unknown, reason: unknown, headers: unknown): unknown {
      if (headersClose((typeof reason === 'object' ? reason : headers) as Headers | undefined)) self.hit(writeHead);
      return originalWriteHead.apply(this, arguments as unknown as unknown[]);
    };
    defineLike(setHeader, originalSet);
    defineLike(writeHead, originalWriteHead);
    proto.setHeader = setHeader;
    proto.writeHead = writeHead;
    this.restore = () => {
      if (proto.setHeader === setHeader) {
        if (ownSet) proto.setHeader = originalSet;
        else delete proto.setHeader;
      }
      if (proto.writeHead === writeHead) proto.writeHead = originalWriteHead;
    };
    originalSetTimeout(() => safely('close-sites', () => this.disarm()), ARM_MS).unref();
  }

  private hit(skip: Function): void {
    safely('close-sites', () => {
      this.sites.hit('close', skip, inDependency);
      if (++this.captures >= MAX_CAPTURES) this.disarm();
    });
  }

  private disarm(): void {
    if (this.state !== 'armed') return;
    this.state = 'done';
    this.restore?.();
    this.restore = undefined;
  }

  contribute(into: GrowthBody): void {
    const rows: NonNullable<GrowthBody['closeHeaderSites']> = [];
    for (const e of this.sites.entries.values()) {
      if (e.site !== undefined) rows.push({ count: e.count, site: e.site, ...(e.stack ? { stack: e.stack } : {}) });
    }
    if (rows.length > 0) into.closeHeaderSites = rows;
  }
}
