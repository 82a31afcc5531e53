// Advice for memory-leak findings (Markdown).

export const memoryLeakAdvice = [
  'Find what keeps objects alive across requests: module-level arrays, maps or caches without',
  'eviction, listeners and timers that close over request objects. Take two heap snapshots a few',
  'thousand requests apart (Chrome DevTools → Memory → Comparison) and look at what grew.',
  'Bound caches (an LRU) and remove listeners and timers when their request ends.',
].join(' ');
