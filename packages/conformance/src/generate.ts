import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startTestServer, type TestServer } from '../../../src/testing/harness.js';
import { testClock } from '../../../src/testing/test-clock.js';
import { appVectors, webhookVectors } from './cases.js';
import { deliverWebhook, issueForApp } from './issued.js';
import { type Vector, writeVectors } from './vectors.js';

/**
 * Writes the conformance vectors from a real service: a test server whose clock stands at
 * CONFORMANCE_EPOCH, so issue times (and every `now` derived from them) are the same on each run;
 * the keys are the server's own, new each run. Artifacts go to the default ARTIFACT_DIR (a folder
 * under the system's temporary folder, named by content).
 *
 *   npx tsx packages/conformance/src/generate.ts [dir]     (default packages/conformance/vectors)
 */
export const CONFORMANCE_EPOCH = '2026-03-02T09:00:00.000Z';

export async function vectorsFrom(server: TestServer): Promise<Vector[]> {
  const vectors: Vector[] = [];
  for (const algorithm of ['RS256', 'EdDSA'] as const) {
    const issued = await issueForApp(server, algorithm);
    vectors.push(...(await appVectors(issued)));
  }
  vectors.push(...webhookVectors(await deliverWebhook(server)));
  return vectors;
}

/** Starts a service, writes the vector files to `dir`, stops it; answers the files written. */
export async function generateVectors(dir: string): Promise<string[]> {
  const server = await startTestServer({}, { clock: testClock(CONFORMANCE_EPOCH), ownDatabase: true });
  try {
    return await writeVectors(dir, await vectorsFrom(server));
  } finally {
    await server.stop();
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const dir = process.argv[2] ?? path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'vectors');
  for (const file of await generateVectors(dir)) process.stdout.write(`${file}\n`);
}
