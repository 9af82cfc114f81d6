import { createHmac } from 'node:crypto';
import { sameSecret } from '../../platform/secrets.js';

/** How long a download link works: long enough to start a large download, short enough to be useless if shared. */
export const DOWNLOAD_LINK_SECONDS = 60 * 60;

/**
 * The shortest time a redirect to the store's own URL (S3, presigned) is good for: a link used in
 * its last seconds still leads somewhere. The store checks the expiry when a request starts, so a
 * long download begun in time finishes.
 */
export const MIN_REDIRECT_SECONDS = 60;

export type DownloadLinks = ReturnType<typeof createDownloadLinks>;

/**
 * Short-lived links to an artifact's bytes, handed out only after a license check, whichever store
 * keeps them (on S3 the link answers a redirect to a presigned URL):
 * `…/releases/files/<artifactId>/<filename>?expires=<unix seconds>&signature=<HMAC>`. The
 * signature (HMAC-SHA256 under a key derived from the server secret every node shares) covers the
 * artifact and the expiry, so a link cannot be pointed at another file or made to last longer,
 * and any node checks it without a database read. The file name is only what a browser saves.
 */
export function createDownloadLinks({ secret, apiBaseUrl }: { secret: string; apiBaseUrl: string }) {
  const key = createHmac('sha256', secret).update('release-download-links').digest();
  const signatureOf = (artifactId: string, expires: number) =>
    createHmac('sha256', key).update(`${artifactId}.${expires}`).digest('base64url');

  return {
    /** A link to the artifact valid until `now` plus DOWNLOAD_LINK_SECONDS. */
    link(artifact: { id: string; filename: string }, now: Date): { url: string; expiresAt: Date } {
      const expires = Math.floor(now.getTime() / 1000) + DOWNLOAD_LINK_SECONDS;
      const query = new URLSearchParams({
        expires: String(expires),
        signature: signatureOf(artifact.id, expires),
      });
      return {
        url: `${apiBaseUrl}/releases/files/${artifact.id}/${encodeURIComponent(artifact.filename)}?${query}`,
        expiresAt: new Date(expires * 1000),
      };
    },

    /** Whether a link's expiry and signature are this service's, and the link still works at `now`. */
    check(artifactId: string, expires: number, signature: string, now: Date): 'ok' | 'expired' | 'invalid' {
      if (!sameSecret(signatureOf(artifactId, expires), signature)) return 'invalid';
      return expires * 1000 > now.getTime() ? 'ok' : 'expired';
    },
  };
}
