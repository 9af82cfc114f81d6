import { hostileInputSuite } from '../testing/hostile-input-suite.js';

/** Hostile input over every operation, the share 1 of 2 (src/testing/hostile-input-suite.ts). */
hostileInputSuite(0, 2);
