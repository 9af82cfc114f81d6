import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { fetchOperations, type Operation, operationName } from '../testing/api-operations.js';
import { startTestServer, type TestServer } from '../testing/harness.js';
import {
  type CampaignOptions,
  describeFinding,
  prepareHostileCampaign,
  runHostileCampaign,
} from '../testing/hostile-campaign.js';
import { type Receiver, startReceiver } from '../testing/receiver.js';

/**
 * Hostile input over every operation of both hosts' OpenAPI documents (see hostile-campaign.ts):
 * no 5xx, no hang, every 4xx in the one error body, the statuses the conventions promise, and
 * no row changed by a refused request. HOSTILE_CASES sets the cases drawn per operator and
 * operation (default 1), HOSTILE_SEED the seed; `bench/hostile-input.ts` runs longer.
 */

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

describe('hostile input over every operation', () => {
  test('both documents list operations to attack', () => {
    assert.ok(operations.filter((op) => op.host === 'core').length > 50);
    assert.ok(operations.filter((op) => op.host === 'pay').length > 5);
  });

  test('every operation answers hostile requests with a clean 4xx (or success) and changes nothing it refuses', async (t) => {
    // Deletions last, so the rows other operations address are still there while they are tried.
    const ordered = [...operations].sort(
      (a, b) => Number(a.method === 'DELETE') - Number(b.method === 'DELETE'),
    );
    let requests = 0;
    for (const op of ordered) {
      await t.test(operationName(op), async () => {
        const report = await runHostileCampaign(server, { ...campaign, operations: [op] });
        assert.ok(report.requests > 0);
        requests += report.requests;
        const findings = report.findings.map(describeFinding);
        assert.equal(findings.length, 0, `${findings.length} findings:\n${findings.slice(0, 12).join('\n')}`);
      });
    }
    t.diagnostic(`${ordered.length} operations, ${requests} hostile requests`);
  });
});
