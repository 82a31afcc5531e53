// Catching the `this` an arrow function closes over (a class-field arrow, as Hono's `app.fetch`)
// at its next call, in this process: the breakpoint's condition hands it over and never pauses;
// calls of a sibling (the same source, another instance) are passed over, and a breakpoint passed
// over too often is given up (hooks/first-call-this.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { onNextCallThis, MAX_PASSED_CALLS } from '../../../src/agent/hooks/first-call-this.js';

// The agent runs as a CommonJS bundle, where node:inspector is reached through `require`.
(globalThis as { require?: NodeRequire }).require ??= createRequire(import.meta.url);

class App {
  constructor(readonly name: string) {}
  fetch = (n: number): string => `${this.name}:${n}`;
}

test('the instance behind a class-field arrow is handed over at its next call, once; the call runs as it would', () => {
  const app = new App('main');
  const seen: unknown[] = [];
  assert.equal(
    onNextCallThis(app.fetch, (self) => {
      seen.push(self);
      return true;
    }),
    true,
  );
  assert.deepEqual(seen, []);
  assert.equal(app.fetch(1), 'main:1');
  assert.equal(seen.length, 1);
  assert.equal(seen[0], app);
});

test('calls of a sibling made from the same source are passed over until the awaited one comes', () => {
  const app = new App('served');
  const other = new App('other');
  const seen: string[] = [];
  const armed = onNextCallThis(app.fetch, (self) => {
    seen.push((self as App).name);
    return self === app;
  });
  assert.equal(armed, true);
  assert.equal(other.fetch(1), 'other:1');
  assert.equal(app.fetch(2), 'served:2');
  assert.deepEqual(seen, ['other', 'served']);
});

test('a breakpoint passed over MAX_PASSED_CALLS times is given up, and said so', async () => {
  const app = new App('quiet');
  const other = new App('busy');
  let lost = 0;
  let taken = 0;
  const armed = onNextCallThis(
    app.fetch,
    (self) => {
      taken++;
      return self === app;
    },
    () => lost++,
  );
  assert.equal(armed, true);
  for (let i = 0; i < MAX_PASSED_CALLS + 5; i++) other.fetch(i);
  await Promise.resolve();
  assert.equal(taken, MAX_PASSED_CALLS);
  assert.equal(lost, 1);
  // Removed: later calls hand nothing over.
  app.fetch(0);
  assert.equal(taken, MAX_PASSED_CALLS);
});
