import type { Issued } from './issued.js';
import { licenseFileVectors } from './license-file-cases.js';
import { manifestVectors } from './manifest-cases.js';
import { revocationListVectors } from './revocation-list-cases.js';
import { tokenVectors } from './token-cases.js';
import type { Vector } from './vectors.js';

export { webhookVectors } from './webhook-cases.js';

/**
 * The cases of each kind, from what the service issued, one family a file. The verdicts are the
 * TypeScript SDK's rules written out (token-verifier.ts, license-file.ts, artifact-manifest.ts,
 * webhooks.ts); the conformance test holds that SDK to them, and every other SDK to the same.
 */

/** Every case of what one app was issued: its tokens, files, lists and manifest, in that order. */
export async function appVectors(issued: Issued): Promise<Vector[]> {
  return [
    ...(await tokenVectors(issued, 'license_token')),
    ...(await tokenVectors(issued, 'seat_token')),
    ...licenseFileVectors(issued),
    ...revocationListVectors(issued),
    ...(await manifestVectors(issued)),
  ];
}
