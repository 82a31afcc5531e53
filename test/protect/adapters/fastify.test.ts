// The fastify adapter against a real fastify server: see framework-suite.ts for the scenarios.
import { frameworkSuite } from './framework-suite.js';

frameworkSuite('fastify');
