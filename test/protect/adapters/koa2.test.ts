// The koa adapter against a real koa 2 server (the `koa2` npm alias): see framework-suite.ts for the scenarios.
import { frameworkSuite } from './framework-suite.js';

frameworkSuite('koa2');
