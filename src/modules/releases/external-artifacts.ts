import type { ReleaseArtifactRow } from '../../platform/db/schema.js';
import { invalidField } from '../../platform/errors.js';

/**
 * Artifacts a seller hosts: the service keeps the address, never the bytes. It does not fetch the
 * address either (not to check it, not to proxy it), so the size and digests of such a file are
 * the seller's word, recorded as declared, and nothing about the address is resolved here: it is
 * only handed, behind a license check, to a client that follows it.
 */

/** The longest address kept, as sent and once encoded: what browsers and proxies all carry. */
export const EXTERNAL_URL_MAX_LENGTH = 2048;

/** Where an artifact's bytes are: the store, by their SHA-256, or the seller's own address. */
export type ArtifactSource = { kind: 'stored'; sha256: string } | { kind: 'external'; url: string };

export function sourceOf(row: Pick<ReleaseArtifactRow, 'url' | 'sha256'>): ArtifactSource {
  if (row.url !== null) return { kind: 'external', url: row.url };
  // The table's check (migration 0037) keeps a stored file's digest.
  if (row.sha256 === null) throw new Error('A stored artifact without its SHA-256');
  return { kind: 'stored', sha256: row.sha256 };
}

/**
 * The address as it will be handed out: an absolute https URL without credentials, in the URL
 * parser's own spelling (host in punycode, other characters percent-encoded), so what goes into a
 * Location header is plain ASCII. https only: a download link of the service never sends a
 * client to a plain-text address, whatever the environment.
 */
export function checkExternalUrl(raw: string): string {
  // The URL parser would quietly drop tabs, line breaks and spaces at the ends: refuse them instead.
  if (/[\s\p{Cc}]/u.test(raw)) throw invalidField('url', 'must not contain spaces or control characters');
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw invalidField('url', 'must be an absolute https URL, like https://downloads.example.com/app.zip');
  }
  if (parsed.protocol !== 'https:') throw invalidField('url', 'must use https');
  if (parsed.username || parsed.password) {
    throw invalidField('url', 'must not carry credentials (a user name or password)');
  }
  if (parsed.href.length > EXTERNAL_URL_MAX_LENGTH) {
    throw invalidField('url', `must be at most ${EXTERNAL_URL_MAX_LENGTH} characters once encoded`);
  }
  return parsed.href;
}

/**
 * A SHA-512 as artifacts carry it (hex, lower case), from hex or from the base64 electron-builder
 * writes in its channel files; the request's schema has checked it is one of the two.
 */
export function sha512Hex(declared: string): string {
  return declared.length === 128 ? declared.toLowerCase() : Buffer.from(declared, 'base64').toString('hex');
}
