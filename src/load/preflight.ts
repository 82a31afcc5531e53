// Before any load: resolve the host once and open one connection (TLS included), so that
// "nothing listens", "no such host" and "certificate not trusted" become clear coded errors
// instead of a run full of socket errors. Workers then connect to the resolved address.

import { lookup } from 'node:dns/promises';
import net from 'node:net';
import { openSocket, readyEvent } from './open-socket.js';
import { hotpathError } from '../errors.js';
import type { WorkerTarget } from './worker-protocol.js';

export interface PreflightInput {
  url: URL;
  socket?: string;
  insecure: boolean;
  timeoutMs: number;
}

const DNS_CODES = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EAI_NONAME', 'ENODATA']);

export async function preflight(input: PreflightInput): Promise<WorkerTarget> {
  const { url } = input;
  const secure = url.protocol === 'https:';
  const hostname = url.hostname.replace(/^\[|\]$/g, '');
  const base = { tls: secure, rejectUnauthorized: !input.insecure, servername: secure && net.isIP(hostname) === 0 ? hostname : undefined };
  let target: WorkerTarget;
  if (input.socket !== undefined) {
    target = { ...base, socketPath: input.socket };
  } else {
    target = { ...base, host: await resolve(hostname), port: Number(url.port || (secure ? 443 : 80)) };
  }
  await probe(target, input, hostname);
  return target;
}

async function resolve(hostname: string): Promise<string> {
  if (net.isIP(hostname) !== 0) return hostname;
  try {
    return (await lookup(hostname)).address;
  } catch (cause) {
    const code = (cause as NodeJS.ErrnoException).code ?? 'ENOTFOUND';
    if (DNS_CODES.has(code)) {
      throw hotpathError('HOTPATH_ERR_DNS', `The host name ${hostname} does not resolve (${code})`, {
        cause,
        details: { hostname, errno: code },
      });
    }
    throw cause;
  }
}

function probe(target: WorkerTarget, input: PreflightInput, hostname: string): Promise<void> {
  const where = target.socketPath ?? `${target.host}:${target.port}`;
  return new Promise((resolvePromise, reject) => {
    const socket = openSocket(target);
    const timer = setTimeout(() => socket.destroy(Object.assign(new Error('connect timed out'), { code: 'ETIMEDOUT' })), input.timeoutMs);
    socket.once(readyEvent(target), () => {
      clearTimeout(timer);
      socket.destroy();
      resolvePromise();
    });
    socket.once('error', (cause: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      socket.destroy();
      reject(classify(cause, where, hostname, target.tls));
    });
  });
}

function classify(cause: NodeJS.ErrnoException, where: string, hostname: string, secure: boolean): Error {
  const code = cause.code ?? 'EUNKNOWN';
  if (DNS_CODES.has(code)) {
    return hotpathError('HOTPATH_ERR_DNS', `The host name ${hostname} does not resolve (${code})`, {
      cause,
      details: { hostname, errno: code },
    });
  }
  if (secure && code !== 'ETIMEDOUT' && (cause.syscall === undefined || code.startsWith('ERR_SSL') || code.startsWith('ERR_TLS'))) {
    return hotpathError(
      'HOTPATH_ERR_TLS',
      `TLS with ${where} failed: ${cause.message} (${code}); use --insecure only for a test server you trust`,
      { cause, details: { errno: code } },
    );
  }
  const hint = code === 'ECONNREFUSED' || code === 'ENOENT' ? ': is the server running and listening there?' : '';
  return hotpathError('HOTPATH_ERR_CONNECT', `Cannot connect to ${where} (${code})${hint}`, {
    cause,
    details: { address: where, errno: code },
  });
}
