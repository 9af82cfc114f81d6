import { hostileInputSuite } from '../testing/hostile-input-suite.js';

/** Hostile input over every operation, the share 2 of 2 (src/testing/hostile-input-suite.ts). */
hostileInputSuite(1, 2);
