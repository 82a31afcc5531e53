// Serialises a request once into the exact bytes written for every send, so the hot path
// only ever writes a prebuilt Buffer (no per-request string building).

export interface ScenarioRequest {
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  /** A string is sent as UTF-8; bytes (a --body-file) are sent unchanged. */
  body?: string | Uint8Array;
}

/** A prebuilt request: its bytes, and whether its response can carry a body (not for HEAD). */
export interface RequestTemplate {
  bytes: Buffer;
  /** True for HEAD: the response has headers only, whatever Content-Length says. */
  head: boolean;
  method: string;
  path: string;
}

export interface TemplateContext {
  /** Value of the Host header. */
  host: string;
  keepalive: boolean;
}

const token = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

export function isToken(s: string): boolean {
  return token.test(s);
}

/**
 * Headers the engine writes itself, whatever the user gives: `Connection` (keep-alive or
 * close follows --keepalive; `-H "Connection: close"` turns keep-alive off, see
 * connectionCloseAsked), `Content-Length` (the body's real length) and `Transfer-Encoding`
 * (bodies are always sent with a Content-Length; a chunked header would misframe them).
 * `Host` is not among them: a user's Host is sent as given.
 */
export const ENGINE_HEADERS: ReadonlySet<string> = new Set(['connection', 'content-length', 'transfer-encoding']);

/** True when a `Connection` header asks for `close` (one connection per request). */
export function connectionCloseAsked(headers: Record<string, string>): boolean {
  return Object.entries(headers).some(
    ([k, v]) => k.toLowerCase() === 'connection' && v.split(',').some((t) => t.trim().toLowerCase() === 'close'),
  );
}

/**
 * A warning for each header the engine overrides (ENGINE_HEADERS), except a `Connection`
 * that agrees with the keep-alive setting and a `Content-Length` that is the body's length.
 */
export function overriddenHeaderWarnings(req: ScenarioRequest, keepalive: boolean, where = ''): string[] {
  const out: string[] = [];
  const bodyLength = req.body === undefined ? 0 : typeof req.body === 'string' ? Buffer.byteLength(req.body) : req.body.length;
  for (const [k, v] of Object.entries(req.headers ?? {})) {
    const name = k.toLowerCase();
    if (!ENGINE_HEADERS.has(name)) continue;
    if (name === 'connection' && v.trim().toLowerCase() === (keepalive ? 'keep-alive' : 'close')) continue;
    if (name === 'content-length' && v.trim() === String(bodyLength)) continue;
    const sent =
      name === 'connection'
        ? `Connection: ${keepalive ? 'keep-alive' : 'close'}`
        : name === 'content-length'
          ? `Content-Length: ${bodyLength} (the body's length)`
          : 'a Content-Length instead';
    out.push(`Header "${k}: ${v}"${where} was not sent as given: the load engine sends ${sent}.`);
  }
  return out;
}

/** Builds one request template. Headers given by the user win over the defaults. */
export function buildTemplate(req: ScenarioRequest, ctx: TemplateContext): RequestTemplate {
  const method = (req.method ?? 'GET').toUpperCase();
  const path = req.path ?? '/';
  const body = req.body === undefined ? undefined : typeof req.body === 'string' ? Buffer.from(req.body) : req.body;
  const user = req.headers ?? {};
  const has = (name: string) => Object.keys(user).some((k) => k.toLowerCase() === name);
  const lines = [`${method} ${path} HTTP/1.1`];
  if (!has('host')) lines.push(`Host: ${ctx.host}`);
  for (const [k, v] of Object.entries(user)) {
    if (ENGINE_HEADERS.has(k.toLowerCase())) continue;
    lines.push(`${k}: ${v}`);
  }
  lines.push(`Connection: ${ctx.keepalive ? 'keep-alive' : 'close'}`);
  if (body !== undefined || method === 'POST' || method === 'PUT' || method === 'PATCH') {
    lines.push(`Content-Length: ${body?.length ?? 0}`);
  }
  const head = Buffer.from(lines.join('\r\n') + '\r\n\r\n', 'latin1');
  return { bytes: sharedBytes(head, body), head: method === 'HEAD', method, path };
}

/**
 * The request's bytes in shared memory: every load worker gets a view of this one copy
 * (workerData shares a SharedArrayBuffer instead of cloning it), and every connection writes
 * the same Buffer, so a 50 MB body costs 50 MB once, not once per worker.
 */
function sharedBytes(head: Buffer, body: Uint8Array | undefined): Buffer {
  const bytes = Buffer.from(new SharedArrayBuffer(head.length + (body?.length ?? 0)));
  head.copy(bytes, 0);
  if (body !== undefined) bytes.set(body, head.length);
  return bytes;
}

/** Parses `Name: value` header strings from the command line. Returns the bad one on failure. */
export function parseHeaderLines(lines: readonly string[]): { headers: Record<string, string> } | { bad: string } {
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const i = line.indexOf(':');
    const name = i === -1 ? '' : line.slice(0, i).trim();
    const value = i === -1 ? '' : line.slice(i + 1).trim();
    if (!isToken(name) || /[\r\n]/.test(value)) return { bad: line };
    headers[name] = value;
  }
  return { headers };
}
