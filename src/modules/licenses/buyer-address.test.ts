import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { startTestServer, type TestServer } from '../../testing/harness.js';
import { givenBuyerAddress, normalizeBuyerAddress } from './buyer-address.js';

const CASES: [given: string, compared: string][] = [
  ['ann@example.com', 'ann@example.com'],
  [' Ann@Example.COM ', 'ann@example.com'],
  ['ann+trial@example.com', 'ann@example.com'],
  ['Ann+Trial+2@example.com', 'ann@example.com'],
  ['ann+@example.com', 'ann@example.com'],
  // Dots are kept: only some providers ignore them.
  ['a.nn@gmail.com', 'a.nn@gmail.com'],
  // A local part that is only a tag is left whole, so two such addresses stay apart.
  ['+tag@example.com', '+tag@example.com'],
  ['ann@sub+domain.example', 'ann@sub+domain.example'],
];

describe('a buyer’s address as trials and payments compare it', () => {
  test('is trimmed, lower case and without a +tag in the local part', () => {
    for (const [given, compared] of CASES) assert.equal(normalizeBuyerAddress(given), compared, given);
  });

  describe('in SQL', () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer();
    });
    after(() => server.stop());

    test('gives the same address as the code, on this store', async () => {
      for (const [given, compared] of CASES) {
        const { rows } = await sql<{
          address: string;
        }>`select ${givenBuyerAddress(given)} as address`.execute(server.db);
        assert.equal(rows[0]?.address, compared, given);
      }
    });
  });
});
