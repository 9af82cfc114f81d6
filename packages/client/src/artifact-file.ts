import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import {
  type ArtifactBytes,
  checkBytes,
  checkManifest,
  chunksOf,
  type ReleaseManifest,
  type VerifyArtifactOptions,
} from './artifact-manifest.js';

/**
 * verifyArtifact for Node, Deno, Bun and Electron's main process: the same checks as the root
 * entry's, and the file may also be a path, read and hashed as it streams (node:crypto), so a file
 * of any size costs one chunk of memory.
 */
export async function verifyArtifact(
  artifact: ArtifactBytes | string,
  manifest: string,
  options: VerifyArtifactOptions,
): Promise<ReleaseManifest> {
  const claims = await checkManifest(manifest, options);
  const hash = createHash('sha256');
  await checkBytes(typeof artifact === 'string' ? createReadStream(artifact) : chunksOf(artifact), claims, {
    update: (chunk) => hash.update(chunk),
    digest: () => hash.digest('hex'),
  });
  return claims;
}
