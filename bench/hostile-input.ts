import { fetchOperations } from '../src/testing/api-operations.js';
import { startTestServer } from '../src/testing/harness.js';
import {
  describeFinding,
  prepareHostileCampaign,
  runHostileCampaign,
} from '../src/testing/hostile-campaign.js';
import { startReceiver } from '../src/testing/receiver.js';

/**
 * The hostile-input campaign of src/app/hostile-input-*.test.ts (src/testing/hostile-input-suite.ts), longer: HOSTILE_CASES cases per
 * operator and operation (default 20), from HOSTILE_SEED (default: random, printed). Prints what
 * it sent and every finding as a request to reproduce; exits 1 on a finding.
 *
 *   HOSTILE_CASES=50 npx tsx bench/hostile-input.ts
 */
const casesPerOperator = Number(process.env.HOSTILE_CASES ?? 20);
const seed = Number(process.env.HOSTILE_SEED ?? Math.floor(Math.random() * 2 ** 31));
const server = await startTestServer();
const receiver = await startReceiver();
try {
  const operations = await fetchOperations(server);
  const campaign = await prepareHostileCampaign(server, { webhookUrl: receiver.url, casesPerOperator, seed });
  const started = Date.now();
  console.log(
    `hostile input: ${operations.length} operations, ${casesPerOperator} cases per operator, seed ${seed}`,
  );
  const report = await runHostileCampaign(server, {
    ...campaign,
    operations,
    onOperation: (name, done, total) => process.stderr.write(`\r${done}/${total} ${name.padEnd(80)}`),
  });
  process.stderr.write('\n');
  console.log(`${report.requests} requests in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  console.log('by operator:', JSON.stringify(report.byOperator, null, 1));
  console.log('by status:', JSON.stringify(report.byStatus));
  console.log(`${report.findings.length} findings`);
  for (const finding of report.findings) console.log(`\n${describeFinding(finding)}`);
  process.exitCode = report.findings.length ? 1 : 0;
} finally {
  await server.stop();
  await receiver.close();
}
