// Abortable waits for the engine's phases: a duration that an AbortSignal can cut short.

/** Resolves true after ms, or false as soon as the signal aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve(false);
    const done = (v: boolean) => {
      clearTimeout(t);
      signal?.removeEventListener('abort', onAbort);
      resolve(v);
    };
    const onAbort = () => done(false);
    const t = setTimeout(() => done(true), ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Resolves false when the signal aborts (never resolves without a signal). */
export function aborted(signal?: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal === undefined) return;
    if (signal.aborted) return resolve(false);
    signal.addEventListener('abort', () => resolve(false), { once: true });
  });
}
