// An inspector session whose `post` never throws. Node's Session#post throws synchronously
// (ERR_INSPECTOR_NOT_CONNECTED, "Session is not connected") when the session is no longer
// connected; the agent worker posts from timers and callbacks, where a throw is uncaught and ends
// the worker, and with it the profiles, the stall watchdog and the post-load GC (a full suite run
// saw the worker end so, once, in a target that had used up its file descriptors). A post that
// throws is failed through its callback instead, on the next microtask as an answer would come,
// so every caller's existing error path handles it; a post without a callback is dropped.
import type { Session } from 'node:inspector';

type Callback = (err: Error | null, result?: unknown) => void;
type Post = (method: string, params?: object | Callback, callback?: Callback) => void;

export function guardPosts<S extends Session>(session: S): S {
  const post = (session.post as Post).bind(session);
  const guarded: Post = (method, params, callback) => {
    const done = typeof params === 'function' ? params : callback;
    try {
      post(method, params, callback);
    } catch (err) {
      if (typeof done === 'function') queueMicrotask(() => done(err instanceof Error ? err : new Error(String(err))));
    }
  };
  (session as { post: Post }).post = guarded;
  return session;
}
