// Advice for memory-leak findings (Markdown).

/** Off-heap growth: the JS objects that hold it are small, so allocation profiles miss it. */
export const externalLeakAdvice = [
  'Something keeps Buffers (or typed arrays) alive across requests: a module-level array, map or cache of',
  'request bodies, file contents or `Buffer.from` copies, or a small slice (`buf.subarray()`) that pins a large',
  'parent buffer. Their bytes live outside the JS heap; the heap profiles see only the small Buffer objects and',
  'what holds them (the culprit, when named). To confirm, in a heap snapshot sort by retained size and look for',
  'ArrayBuffer / Buffer owners. Keep ids or parsed values instead of',
  'raw bytes, bound the collection, or copy small slices out of large buffers (`Buffer.from(slice)`).',
].join(' ');

export const memoryLeakAdvice = [
  'Find what keeps objects alive across requests: module-level arrays, maps or caches without',
  'eviction, queues filled faster than they drain, listeners and timers that close over request objects. Take two heap snapshots a few',
  'thousand requests apart (Chrome DevTools → Memory → Comparison) and look at what grew.',
  'Bound caches (an LRU) and remove listeners and timers when their request ends.',
].join(' ');

/** A module imported under a new URL per call (cache busting): node keeps each one. */
export const reloadedModuleAdvice = [
  'Import the module once (a static `import`, or one `import()` whose promise is kept) and reuse it. ES modules',
  'are never unloaded: a query or fragment that changes per call (`?v=${Date.now()}`) makes each `import()` load',
  'and keep a new copy. To pick up edits, watch the file and restart the process (or read templates and data',
  "as files, not modules); CommonJS's `delete require.cache[...]` leaks the same way through the parent's `children`.",
].join(' ');
