// The "most self time" table of a flame view: self summed per function, total counted once
// per stack for recursive functions.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { TreeBuilder } from '../../../../src/report/ui/flame/tree-builder.js';
import { topFunctions } from '../../../../src/report/ui/flame/top-functions.js';

describe('topFunctions', () => {
  it('ranks functions by self time and counts recursion once in their total', () => {
    // all ─ X(1) ─ X(2) ─ Y(3)
    //     └ Y(4)
    const b = new TreeBuilder(-1, 2);
    const x1 = b.child(0, 0);
    const x2 = b.child(x1, 0);
    const y1 = b.child(x2, 1);
    const y2 = b.child(0, 1);
    b.addSelf(x1, 1);
    b.addSelf(x2, 2);
    b.addSelf(y1, 3);
    b.addSelf(y2, 4);
    const top = topFunctions(b.finish(), 2, 10);
    assert.deepEqual(top, [
      { frame: 1, self: 7, total: 7 },
      { frame: 0, self: 3, total: 6 },
    ]);
    assert.equal(topFunctions(b.finish(), 2, 1).length, 1);
  });
});
