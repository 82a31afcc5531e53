// The fastify adapter against a real fastify 4 server (the `fastify4` npm alias): see framework-suite.ts for the scenarios.
import { frameworkSuite } from './framework-suite.js';

frameworkSuite('fastify4');
