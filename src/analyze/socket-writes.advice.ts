// Advice for socket-writes findings (Markdown).

export const socketWritesAdvice = [
  'Write each response in one piece, or a few large ones: every `res.write()` chunk is converted and queued on its',
  "own by node's stream code, and a write on a socket that is not corked is its own system call through the",
  "kernel's TCP stack (on loopback, with the delivery to the peer), whatever its size. Build the body first and send it with `res.end(body)` (join an array of strings once), or wrap a loop",
  'of writes in `res.cork()` … `process.nextTick(() => res.uncork())` so Node sends them as one `writev`. A',
  'template engine or stream that emits many tiny chunks can be buffered the same way, or piped through a',
  'transform that batches to 16-64 KB.',
].join(' ');
