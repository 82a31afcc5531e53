// The express adapter against a real express 4 server (the `express4` npm alias): see framework-suite.ts for the scenarios.
import { frameworkSuite } from './framework-suite.js';

frameworkSuite('express4');
