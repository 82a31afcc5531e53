// Serialises a request once into the exact bytes written for every send, so the hot path
// only ever writes a prebuilt Buffer (no per-request string building).

export interface ScenarioRequest {
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  body?: string;
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

/** Builds one request template. Headers given by the user win over the defaults. */
export function buildTemplate(req: ScenarioRequest, ctx: TemplateContext): RequestTemplate {
  const method = (req.method ?? 'GET').toUpperCase();
  const path = req.path ?? '/';
  const body = req.body === undefined ? undefined : Buffer.from(req.body);
  const user = req.headers ?? {};
  const has = (name: string) => Object.keys(user).some((k) => k.toLowerCase() === name);
  const lines = [`${method} ${path} HTTP/1.1`];
  if (!has('host')) lines.push(`Host: ${ctx.host}`);
  for (const [k, v] of Object.entries(user)) {
    if (k.toLowerCase() === 'connection' || k.toLowerCase() === 'content-length') continue;
    lines.push(`${k}: ${v}`);
  }
  lines.push(`Connection: ${ctx.keepalive ? 'keep-alive' : 'close'}`);
  if (body !== undefined || method === 'POST' || method === 'PUT' || method === 'PATCH') {
    lines.push(`Content-Length: ${body?.length ?? 0}`);
  }
  const head = Buffer.from(lines.join('\r\n') + '\r\n\r\n', 'latin1');
  return { bytes: body ? Buffer.concat([head, body]) : head, head: method === 'HEAD', method, path };
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
