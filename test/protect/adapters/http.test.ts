// The http adapter against a real http server: see framework-suite.ts for the scenarios.
import { frameworkSuite } from './framework-suite.js';

frameworkSuite('http');
