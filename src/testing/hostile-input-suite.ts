import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { fetchOperations, type Operation, operationName } from './api-operations.js';
import { startTestServer, type TestServer } from './harness.js';
import {
  type CampaignOptions,
  describeFinding,
  prepareHostileCampaign,
  runHostileCampaign,
} from './hostile-campaign.js';
import { type Receiver, startReceiver } from './receiver.js';

/**
 * Hostile input over the operations of both hosts' OpenAPI documents (see hostile-campaign.ts):
 * no 5xx, no hang, every 4xx in the one error body, the statuses the conventions promise, and
 * no row changed by a refused request. The operations, by name, are dealt into `shards` files
 * (hostile-input-N.test.ts), each with a server and an estate of its own, so the files run side
 * by side and each stays well within the runner's time for a file. HOSTILE_CASES sets the cases
 * drawn per operator and operation (default 1), HOSTILE_SEED the seed; `bench/hostile-input.ts`
 * runs longer.
 */
export function hostileInputSuite(shard: number, shards: number): void {
  let server: TestServer;
  let receiver: Receiver;
  let operations: Operation[];
  let campaign: Omit<CampaignOptions, 'operations'>;

  before(async () => {
    server = await startTestServer();
    receiver = await startReceiver();
    operations = await fetchOperations(server);
    campaign = await prepareHostileCampaign(server, {
      webhookUrl: receiver.url,
      casesPerOperator: Number(process.env.HOSTILE_CASES ?? 1),
      seed: Number(process.env.HOSTILE_SEED ?? 20261124),
    });
  });
  after(async () => {
    await server.stop();
    await receiver.close();
  });

  describe(`hostile input over every operation (share ${shard + 1} of ${shards})`, () => {
    test('both documents list operations to attack', () => {
      assert.ok(operations.filter((op) => op.host === 'core').length > 50);
      assert.ok(operations.filter((op) => op.host === 'pay').length > 5);
    });

    test('every operation answers hostile requests with a clean 4xx (or success) and changes nothing it refuses', async (t) => {
      const mine = operations
        .map((op) => ({ op, name: operationName(op) }))
        .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
        .filter((_, index) => index % shards === shard)
        .map(({ op }) => op);
      // Deletions last, so the rows other operations address are still there while they are tried.
      const ordered = mine.sort((a, b) => Number(a.method === 'DELETE') - Number(b.method === 'DELETE'));
      let requests = 0;
      for (const op of ordered) {
        await t.test(operationName(op), async () => {
          const report = await runHostileCampaign(server, { ...campaign, operations: [op] });
          assert.ok(report.requests > 0);
          requests += report.requests;
          const findings = report.findings.map(describeFinding);
          assert.equal(
            findings.length,
            0,
            `${findings.length} findings:\n${findings.slice(0, 12).join('\n')}`,
          );
        });
      }
      t.diagnostic(`${ordered.length} operations, ${requests} hostile requests`);
    });
  });
}
