import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';

/**
 * The conformance vectors every SDK runs (README.md beside this folder describes them for SDK
 * authors). Times: `now` is Unix seconds; a clock-guard state is kept in milliseconds, as the
 * SDKs store it (`{ lastSeen, vouchedAt? }`).
 */
export type VectorKind =
  | 'license_token'
  | 'seat_token'
  | 'license_file'
  | 'revocation_list'
  | 'webhook'
  | 'release_manifest';

export interface ClockState {
  lastSeen: number;
  vouchedAt?: number;
}

export interface RevocationSnapshot {
  appId: string;
  version: number;
  issuedAt: number;
  revoked: string[];
}

export interface JsonWebKeySet {
  keys: Record<string, unknown>[];
}

export interface Vector {
  name: string;
  kind: VectorKind;
  /** The algorithm of the app that issued the input; absent for webhooks. */
  algorithm?: 'RS256' | 'EdDSA';
  /**
   * What the client is handed: a token, a file, a list, a webhook's raw body and headers, or a
   * release manifest and the downloaded file's bytes (base64).
   */
  input:
    | { token: string }
    | { file: string }
    | { list: string }
    | { body: string; headers: Record<string, string> }
    | { manifest: string; artifact: string };
  /** What it checks against: the key set (tokens, files, lists) or the endpoint's secret (webhooks). */
  keys: { jwks: JsonWebKeySet } | { secret: string };
  context: {
    now: number;
    appId?: string;
    hwuid?: string;
    nonce?: string;
    licenseKey?: string;
    /** The clock guard before the check. */
    clock?: ClockState;
    /** License files: the revocations in force. Revocation lists: the list held before. */
    revocations?: RevocationSnapshot;
    /** Release manifests: the version and file name the client expects (not compared when absent). */
    version?: string;
    filename?: string;
  };
  expect: Verdict;
}

export type Verdict =
  | {
      valid: true;
      /** Claims the answer must carry (a subset). */
      claims?: Record<string, unknown>;
      /** License files past license_exp under maintain_access. */
      expired?: boolean;
      /** The clock guard after the check. */
      clock?: ClockState;
      /** Revocation lists: the snapshot in force after the check. */
      revocations?: RevocationSnapshot;
    }
  | {
      valid: false;
      /** The code the TypeScript SDK's error carries. */
      error: string;
      /** The clock guard after the refusal, when the check was given one. */
      clock?: ClockState;
    };

export const VECTOR_KINDS: readonly VectorKind[] = [
  'license_token',
  'seat_token',
  'license_file',
  'revocation_list',
  'webhook',
  'release_manifest',
];

/** One file per kind, `<kind>.json`: `{ "format": 1, "kind", "vectors": [...] }`. */
export async function writeVectors(dir: string, vectors: Vector[]): Promise<string[]> {
  await mkdir(dir, { recursive: true });
  const written: string[] = [];
  for (const kind of VECTOR_KINDS) {
    const file = path.join(dir, `${kind}.json`);
    const ofKind = vectors.filter((vector) => vector.kind === kind);
    await writeFile(file, `${JSON.stringify({ format: 1, kind, vectors: ofKind }, null, 2)}\n`);
    written.push(file);
  }
  return written;
}
