// The default answer to a shed request: 503 with Retry-After and a short body, JSON when
// the client asks for JSON, plain text otherwise. Bodies are built once per reason.

import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { PressureReason } from './protect-options.js';

const labels: Record<PressureReason, string> = {
  eventLoopDelay: 'event loop delay',
  eventLoopUtilization: 'event loop utilization',
  heapUsedBytes: 'heap used',
  rssBytes: 'resident set size',
};

export interface ShedResponse {
  headers: OutgoingHttpHeaders;
  body: Buffer;
}

/** Responses for every reason and format, built when the guard is created. */
export type ShedResponses = Record<PressureReason, { json: ShedResponse; text: ShedResponse }>;

function build(contentType: string, text: string, retryAfter: number): ShedResponse {
  const body = Buffer.from(text);
  return {
    body,
    headers: {
      'content-type': contentType,
      'content-length': body.length,
      'retry-after': String(retryAfter),
      'cache-control': 'no-store',
    },
  };
}

export function buildShedResponses(retryAfter: number): ShedResponses {
  const out = {} as ShedResponses;
  for (const reason of Object.keys(labels) as PressureReason[]) {
    const message = `Server under pressure (${labels[reason]}), retry later`;
    out[reason] = {
      json: build(
        'application/json; charset=utf-8',
        JSON.stringify({ statusCode: 503, error: 'Service Unavailable', message, reason }),
        retryAfter,
      ),
      text: build('text/plain; charset=utf-8', `Service Unavailable: ${message}\n`, retryAfter),
    };
  }
  return out;
}

/** JSON for `application/json`, `application/problem+json` and the like; text otherwise. */
export function wantsJson(req: IncomingMessage): boolean {
  const accept = req.headers.accept;
  return accept !== undefined && accept.includes('json');
}

export function pickShedResponse(responses: ShedResponses, req: IncomingMessage, reason: PressureReason): ShedResponse {
  return wantsJson(req) ? responses[reason].json : responses[reason].text;
}

/** Writes the default 503 on a raw response. */
export function writeShedResponse(res: ServerResponse, r: ShedResponse): void {
  res.writeHead(503, r.headers);
  res.end(r.body);
}
