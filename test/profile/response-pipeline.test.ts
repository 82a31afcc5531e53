// pipelineTime: the part of a function's attributed time that answered the request (Node's
// HTTP/socket/stream work, and work inside the framework that called the function), on a
// hand-written profile with exactly known weights.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { buildCallTree } from '../../src/profile/build-call-tree.js';
import { pipelineTime } from '../../src/profile/response-pipeline.js';
import { attributedSelf } from '../../src/profile/attribution.js';
import type { CpuProfile } from '../../src/profile/cpu-profile.js';
import { node } from './synthetic-profiles.js';

const cwd = '/srv/app';
const app = `file://${cwd}/server.js`;
const express = (f: string) => `file://${cwd}/node_modules/express/lib/${f}`;
const lodash = `file://${cwd}/node_modules/lodash/lodash.js`;

/**
 * (root) → emit → handle (express router) → handler (app) →
 *   json (express response) → send (express) → update (crypto hash)      3 samples: framework's etag
 *   json (express response) → stringify line? no: JSON.stringify frame     1 sample: the payload
 *   writev (node:net)                                                      2 samples: answering
 *   cloneDeep (lodash, not a caller)                                       2 samples: its own choice
 *   handler's own code                                                     1 sample
 * plus a second app function, called by lodash's callback → helper (app) → update: 1 sample.
 */
function profile(): CpuProfile {
  return {
    nodes: [
      node(1, '(root)', '', [2]),
      node(2, 'emit', 'node:events', [3], 500),
      node(3, 'handle', express('router/layer.js'), [4], 20),
      node(4, 'handler', app, [5, 8, 9, 10], 6),
      node(5, 'json', express('response.js'), [6, 7], 200),
      node(6, 'send', express('response.js'), [11], 100),
      node(7, 'JSON.stringify', '', [], 0),
      node(8, 'writev', 'node:net', [], 900),
      node(9, 'cloneDeep', lodash, [12], 3000),
      node(10, 'handler', app, [], 6),
      node(11, 'update', 'node:internal/crypto/hash', [], 100),
      node(12, 'helper', app, [13], 30),
      node(13, 'update', 'node:internal/crypto/hash', [], 100),
    ],
    startTime: 0,
    endTime: 10_000,
    samples: [11, 11, 11, 7, 8, 8, 9, 9, 10, 13],
    timeDeltas: [0, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000],
  };
}

test("pipelineTime: Node's socket writes and the calling framework's own work are the answer; the payload's JSON and other packages are the function's choice", () => {
  const tree = buildCallTree(profile(), { cwd, sourceMaps: false });
  const handler = tree.frames.findIndex((f) => f.name === 'handler' && f.kind === 'app');
  const helper = tree.frames.findIndex((f) => f.name === 'helper');
  const attributed = attributedSelf(tree);
  const handlerSelf = [...attributed.keys()].filter((i) => tree.frame[i] === handler).reduce((a, i) => a + attributed[i], 0);
  const pipeline = pipelineTime(tree);
  // json → send → update (3 samples) and writev (2); not JSON.stringify (1), cloneDeep (2) or its own code (1).
  assert.equal(handlerSelf, 9000);
  assert.equal(pipeline[handler], 5000);
  // helper's hashing is its own work, although lodash (a dependency) called it.
  assert.equal(pipeline[helper], 0);
});

test('pipelineTime: without a framework above, a dependency the function calls is its own choice', () => {
  const p = profile();
  // The handler is called straight from node's emit: express is no longer a caller.
  p.nodes[1] = node(2, 'emit', 'node:events', [4], 500);
  p.nodes[2] = node(3, 'handle', express('router/layer.js'), [], 20);
  const tree = buildCallTree(p, { cwd, sourceMaps: false });
  const handler = tree.frames.findIndex((f) => f.name === 'handler' && f.kind === 'app');
  assert.equal(pipelineTime(tree)[handler], 2000);
});

test("pipelineTime: JSON the framework runs on its own lines (Express's stringify in res.json) is the payload's, not the answer's", () => {
  const dir = mkdtempSync(join(tmpdir(), 'hotpath-pipeline-'));
  try {
    mkdirSync(join(dir, 'node_modules', 'express', 'lib'), { recursive: true });
    const res = join(dir, 'node_modules', 'express', 'lib', 'response.js');
    // express 5, lib/response.js: stringify() at line 1, its JSON.stringify at line 2, the rest of json() at line 5.
    writeFileSync(
      res,
      [
        'function stringify (value, replacer, spaces, escape) {',
        '  var json = replacer || spaces ? JSON.stringify(value, replacer, spaces) : JSON.stringify(value);',
        '  return json',
        '}',
        "res.json = function json(obj) { this.set('Content-Type', 'application/json') }",
      ].join('\n'),
    );
    const url = pathToFileURL(res).href;
    const stringify = node(5, 'stringify', url, [], 0);
    stringify.positionTicks = [{ line: 2, ticks: 3 }];
    const json = node(4, 'json', url, [5], 4);
    json.positionTicks = [{ line: 5, ticks: 1 }];
    const profile: CpuProfile = {
      nodes: [
        node(1, '(root)', '', [2]),
        node(2, 'handle', pathToFileURL(join(dir, 'node_modules', 'express', 'lib', 'router.js')).href, [3], 20),
        node(3, 'handler', pathToFileURL(join(dir, 'server.js')).href, [4], 6),
        json,
        stringify,
      ],
      startTime: 0,
      endTime: 5_000,
      samples: [5, 5, 5, 4, 3],
      timeDeltas: [0, 1000, 1000, 1000, 1000],
    };
    const tree = buildCallTree(profile, { cwd: dir });
    const handler = tree.frames.findIndex((f) => f.name === 'handler');
    // The framework's json() (1 sample) answers; its stringify's JSON.stringify (3) is the payload's.
    assert.equal(pipelineTime(tree)[handler], 1000);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
