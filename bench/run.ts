import { analyticsRoutes } from './analytics.js';
import { httpOverhead } from './http-overhead.js';
import { verifyPath } from './verify.js';
import { webhookDelivery } from './webhooks.js';

/**
 * Runs every benchmark and prints markdown tables. Figures are only comparable within one
 * run: each table reports ratios against a baseline measured in the same run.
 * BENCH_SECONDS sets the duration of each scenario (default 3); `npm run bench -- webhooks`
 * runs one section.
 */
const only = process.argv[2];
const all = { http: httpOverhead, verify: verifyPath, webhooks: webhookDelivery, analytics: analyticsRoutes };
const sections: string[] = [];
for (const [name, run] of Object.entries(all)) if (!only || only === name) sections.push(await run());
console.log(`${sections.join('\n\n')}\n`);
