// The restify adapter against a real restify server: see framework-suite.ts for the scenarios.
// Should restify fail to load on some Node version (restify 11 did on Node 24: its spdy
// dependency called the removed process.binding('http_parser')), the suite says so and skips.
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
