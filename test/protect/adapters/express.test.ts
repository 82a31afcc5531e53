// The express adapter against a real express server: see framework-suite.ts for the scenarios.
import { frameworkSuite } from './framework-suite.js';

frameworkSuite('express');
