// The koa adapter against a real koa server: see framework-suite.ts for the scenarios.
import { frameworkSuite } from './framework-suite.js';

frameworkSuite('koa');
