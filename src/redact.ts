// The one place that decides what is a secret in what hotpath writes or prints. Run
// directories get shared and attached to tickets, `--json` output lands in CI logs: the
// credentials the user gave to drive load (URL userinfo, auth headers, bodies) stay out.
//
// The rule (docs/run-directory.md, Secrets):
// - a URL's userinfo (`http://user:pw@host/`) becomes `http://<redacted>@host/`, wherever the
//   URL is recorded or shown (meta.json, load.json, report.*, --json, the terminal, errors);
// - a header's value is redacted when its name is one of SECRET_HEADER_NAMES, or contains
//   one of SECRET_NAME_PARTS (`X-Api-Key`, `X-Session`, `X-Auth-Token`, `X-CSRF-Token`...),
//   or was named with `--redact <header>`;
// - a `-b` body is never recorded, only its length (a login body holds a password).

export const REDACTED = '<redacted>';

/** Header names that carry credentials whatever their name's parts say. */
export const SECRET_HEADER_NAMES: ReadonlySet<string> = new Set(['authorization', 'proxy-authorization', 'cookie', 'set-cookie']);

/** A header whose name contains one of these (case-insensitive) is taken for a credential. */
export const SECRET_NAME_PARTS: readonly string[] = [
  'auth',
  'token',
  'key',
  'secret',
  'session',
  'pass',
  'credential',
  'signature',
  'csrf',
  'xsrf',
  'cookie',
];

export function isSecretHeader(name: string, extra: readonly string[] = []): boolean {
  const n = name.trim().toLowerCase();
  return SECRET_HEADER_NAMES.has(n) || SECRET_NAME_PARTS.some((p) => n.includes(p)) || extra.some((e) => e.trim().toLowerCase() === n);
}

/**
 * The URL with its userinfo replaced, on the text as given (it need not parse: an invalid URL
 * in an error message is redacted too). The last `@` before the path ends the userinfo, as
 * the WHATWG parser reads it.
 */
export function redactUrl(url: string): string {
  return url.replace(/^([a-zA-Z][a-zA-Z0-9+.-]*:\/\/)[^/?#\\]*@/, `$1${REDACTED}@`);
}

type Headers = string[] | Record<string, string> | undefined;

/** `Name: value` lines or a name → value object, with the values of secret headers redacted. */
export function redactHeaders<H extends Headers>(headers: H, extra: readonly string[] = []): H {
  if (headers === undefined) return headers;
  const value = (name: string, v: string) => (isSecretHeader(name, extra) ? REDACTED : v);
  if (Array.isArray(headers)) {
    return headers.map((h) => {
      const i = h.indexOf(':');
      return i === -1 ? h : `${h.slice(0, i)}: ${value(h.slice(0, i), h.slice(i + 1).trim())}`;
    }) as H;
  }
  return Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, value(k, v)])) as H;
}

/** A body as recorded: its size only. */
export function redactBody(body: string | undefined): string | undefined {
  return body === undefined ? undefined : `${REDACTED} (${Buffer.byteLength(body)} bytes)`;
}
