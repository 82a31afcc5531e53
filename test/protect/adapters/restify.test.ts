// The restify adapter against a real restify server: see framework-suite.ts for the scenarios.
// Restify 11 itself cannot load on Node 24 (its spdy dependency calls the removed
// process.binding('http_parser')); the suite is skipped there with that reason.
import { createRequire } from 'node:module';
import { frameworkSuite } from './framework-suite.js';

function unloadable(): string | undefined {
  try {
    createRequire(import.meta.url)('restify');
    return undefined;
  } catch (err) {
    return `restify does not load on Node ${process.version}: ${(err as Error).message}`;
  }
}

frameworkSuite('restify', unloadable());
