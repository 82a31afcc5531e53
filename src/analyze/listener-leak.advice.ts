// Advice for listener-leak findings (Markdown).

export const listenerLeakAdvice = (emitter: string, event: string) =>
  [
    `Add the \`'${event}'\` listener to \`${emitter}\` once, at startup, not on the request path.`,
    'If a guard is meant to prevent re-subscribing, check that it tests the flag it sets',
    '(a function or object is always truthy), or use `emitter.once()` / remove the listener',
    'when the request ends.',
  ].join(' ');

/** The leaking listeners were added with once(): they wait for an event that never comes. */
export const onceLeakAdvice = (emitter: string, event: string) =>
  [
    `These listeners were added with \`once()\`: each waits for \`'${event}'\` on \`${emitter}\`, which did not come`,
    'during the run (a shutdown, a reload, an error), so every request leaves one behind. Remove it when the request',
    'ends: `events.once(emitter, name, { signal })` with an `AbortSignal` aborted in a `finally`, or `removeListener`',
    'when the work is done; or subscribe once at startup and hand the event to the requests that wait.',
  ].join(' ');

export const maxListenersAdvice =
  'Restore the MaxListenersExceededWarning: remove `setMaxListeners(0)` / `defaultMaxListeners = Infinity`, ' +
  'or set a real bound. The warning is what would have exposed this leak.';
