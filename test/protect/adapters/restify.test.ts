// The restify adapter against a real restify server: see framework-suite.ts for the scenarios.
import { frameworkSuite } from './framework-suite.js';

frameworkSuite('restify');
