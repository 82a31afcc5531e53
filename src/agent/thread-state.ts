// What the hooks need to know about this thread, cheaply: has it started serving, and how
// many requests are in flight right now (kept by the HTTP collector).
export const threadState = {
  /** True once a server listens on this thread (the growth hooks count only after that). */
  listening: false,
  /** Requests started and not yet finished on this thread. */
  activeRequests: 0,
  /** Above zero while the agent itself creates objects (its worker): the hooks look away. */
  agentBusy: 0,
  /** Emitters the agent owns (its worker and the worker's stdio): their listeners are not the app's. */
  agentOwned: new WeakSet<object>(),
};
