// Advice for connection-churn findings (Markdown).

export const clientChurnAdvice = [
  'Clients open a new connection for almost every request, like a proxy speaking HTTP/1.0 to Node.',
  'Enable keep-alive between the proxy and Node (nginx: `proxy_http_version 1.1;`,',
  '`proxy_set_header Connection "";` and an `upstream { keepalive 64; }`; HTTP clients: a keep-alive agent).',
].join(' ');

export const serverChurnAdvice = [
  'The server closes connections after few requests. Check for `Connection: close` responses,',
  "`server.maxRequestsPerSocket`, or a `keepAliveTimeout` shorter than the clients' idle time.",
].join(' ');

export const appCloseAdvice = [
  "Stop sending `Connection: close`: look for `res.setHeader('Connection', 'close')`, a headers object",
  'with `Connection` in `writeHead`, or a middleware that copies a legacy header, and for',
  '`res.shouldKeepAlive = false`. Node keeps HTTP/1.1 connections open by itself; to cap how long one',
  'client holds a connection, use `server.maxRequestsPerSocket` or `keepAliveTimeout` instead.',
].join(' ');

export const keepAliveTimeoutAdvice = (current: number | undefined) =>
  [
    `Set \`server.keepAliveTimeout\` longer than the idle timeout of whatever sits in front of Node`,
    `(load balancers commonly keep idle connections 60 s: use 65000)${current !== undefined ? `; it is ${current} ms now` : ''},`,
    'and `server.headersTimeout` a little above it, so Node never closes a socket the proxy is about to reuse.',
  ].join(' ');

export const outgoingChurnAdvice = (tls: boolean) =>
  [
    'Reuse connections to the upstream: create one `new http.Agent({ keepAlive: true })`',
    `(\`https.Agent\`${tls ? ', which also keeps TLS sessions' : ''}) at startup and pass it with every call, or use undici's`,
    '`Pool`/`fetch`. Since Node 19 the global agent keeps connections alive, unless a call passes',
    '`agent: false` or its own `new http.Agent()`, whose `keepAlive` is off by default. If the',
    'upstream answers `Connection: close`, enable keep-alive there too.',
  ].join(' ');

/** fetch calls that each open a connection (undici keeps one only once its body is consumed). */
export const fetchChurnAdvice = [
  'Read or cancel every response body: `await res.json()` / `await res.text()` when the content is needed,',
  'else `await res.body?.cancel()` (or a `HEAD` request when only the status matters). undici, behind `fetch`,',
  'returns a connection to its pool only once the body is consumed; an unread body pins its socket and its',
  'buffers until the Response is collected. If every body is read, check for `Connection: close` answers and',
  'for a new `Agent`/dispatcher made per call.',
].join(' ');

/** A database or cache client connected per request. */
export const driverChurnAdvice = [
  'Create the database or cache client once, at startup, and share it: its connection (or pool) then serves',
  'every request. A client made per request (a new ORM client, `net.connect` per query) pays the handshake and',
  "the server's session setup each time, and under load exhausts the server's connection slots. Where a",
  'connection must be per unit of work, take it from a pool and give it back.',
].join(' ');
