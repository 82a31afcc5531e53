// This thread's own inspector, for tests that need a real CPU profile and real function ranges:
// a connected session, a promise-returning post, and a CPU profile of a busy loop.
import * as inspector from 'node:inspector';
import type { CpuProfile } from '../../../src/profile/cpu-profile.js';

/** A new session connected to this thread. */
export function connect(): inspector.Session {
  const s = new inspector.Session();
  s.connect();
  return s;
}

export function post<T>(session: inspector.Session, method: string, params?: object): Promise<T> {
  return new Promise((resolve, reject) => session.post(method, params, (err, r) => (err ? reject(err) : resolve(r as T))));
}

/** A CPU profile at 100 µs of `step` called over and over for `ms`. */
export async function profileLoop(step: () => void, ms: number): Promise<CpuProfile> {
  const session = connect();
  try {
    await post(session, 'Profiler.enable');
    await post(session, 'Profiler.setSamplingInterval', { interval: 100 });
    await post(session, 'Profiler.start');
    const until = Date.now() + ms;
    while (Date.now() < until) step();
    const { profile } = await post<{ profile: CpuProfile }>(session, 'Profiler.stop');
    await post(session, 'Profiler.disable');
    return profile;
  } finally {
    session.disconnect();
  }
}
