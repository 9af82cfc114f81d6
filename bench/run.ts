import { httpOverhead } from './http-overhead.js';
import { verifyPath } from './verify.js';

/**
 * Runs every benchmark and prints markdown tables. Figures are only comparable within one
 * run: each table reports ratios against a baseline measured in the same run.
 * BENCH_SECONDS sets the duration of each scenario (default 3).
 */
const sections = [await httpOverhead(), await verifyPath()];
console.log(`${sections.join('\n\n')}\n`);
