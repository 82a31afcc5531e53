// Advice for listener-leak findings (Markdown).

export const listenerLeakAdvice = (emitter: string, event: string) => [
  `Add the \`'${event}'\` listener to \`${emitter}\` once, at startup, not on the request path.`,
  'If a guard is meant to prevent re-subscribing, check that it tests the flag it sets',
  '(a function or object is always truthy), or use `emitter.once()` / remove the listener',
  'when the request ends.',
].join(' ');

export const maxListenersAdvice =
  'Restore the MaxListenersExceededWarning: remove `setMaxListeners(0)` / `defaultMaxListeners = Infinity`, ' +
  'or set a real bound. The warning is what would have exposed this leak.';
