import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { ConfigError } from '../../platform/config.js';

/**
 * Private signing keys at rest: AES-256-GCM under a key-encryption key (SIGNING_KEY_ENCRYPTION_KEY),
 * with the key's kid as associated data, so a sealed key copied onto another row does not open.
 * Stored as `v1.<kek id>.<iv>.<ciphertext><tag>` (base64url), the PKCS#8 DER inside; the kek id
 * (a digest of the key-encryption key, not the key) says which configured key opens it.
 *
 * The first configured key seals; every configured key opens, which is how the key-encryption
 * key is rotated (docs/operations.md, "Signing keys").
 */

const FORMAT = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;
export const KEY_ENCRYPTION_KEY_SETTING = 'SIGNING_KEY_ENCRYPTION_KEY';

export type KeySealer = ReturnType<typeof createKeySealer>;

export function createKeySealer(keyEncryptionKeys: readonly Uint8Array[]) {
  if (keyEncryptionKeys.length === 0 || keyEncryptionKeys.some((key) => key.length !== 32)) {
    throw new ConfigError(KEY_ENCRYPTION_KEY_SETTING, 'must be one or more keys of 32 bytes');
  }
  const keys = keyEncryptionKeys.map((key) => ({ id: keyEncryptionKeyId(key), key: Buffer.from(key) }));
  const current = keys[0] as (typeof keys)[number];

  return {
    /** Seals a private key (PKCS#8 DER) under the first key-encryption key. */
    seal(kid: string, pkcs8: Uint8Array): string {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', current.key, iv).setAAD(Buffer.from(kid));
      const sealed = Buffer.concat([cipher.update(pkcs8), cipher.final(), cipher.getAuthTag()]);
      return [FORMAT, current.id, iv.toString('base64url'), sealed.toString('base64url')].join('.');
    },

    /**
     * The private key (PKCS#8 DER) of a stored row. Throws a ConfigError naming the setting when
     * no configured key-encryption key opens it, so a node with a wrong setting never starts.
     */
    open(kid: string, stored: string): Buffer {
      const [format, id, iv, sealed] = stored.split('.');
      if (format !== FORMAT || !id || !iv || !sealed) {
        throw new Error(`signing key ${kid} is stored in a form this version does not read`);
      }
      const key = keys.find((candidate) => candidate.id === id);
      if (!key) {
        throw new ConfigError(
          KEY_ENCRYPTION_KEY_SETTING,
          `signing key ${kid} was sealed under key-encryption key ${id}, which is not among those set (${keys.map((k) => k.id).join(', ')}); add the key it was sealed with after the new one`,
        );
      }
      const bytes = Buffer.from(sealed, 'base64url');
      try {
        const decipher = createDecipheriv('aes-256-gcm', key.key, Buffer.from(iv, 'base64url'))
          .setAAD(Buffer.from(kid))
          .setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
        return Buffer.concat([
          decipher.update(bytes.subarray(0, bytes.length - TAG_BYTES)),
          decipher.final(),
        ]);
      } catch {
        throw new Error(`signing key ${kid} does not open under key-encryption key ${id}: it was altered`);
      }
    },

    /** Whether a stored key is already sealed under the first key-encryption key. */
    sealedUnderCurrent(stored: string): boolean {
      return stored.startsWith(`${FORMAT}.${current.id}.`);
    },
  };
}

/** Rows written before sealing (migration 0023) hold the PEM itself until a start seals them. */
export function isPlainPem(stored: string): boolean {
  return stored.startsWith('-----BEGIN');
}

/** Names a key-encryption key in sealed rows and messages without revealing it. */
export function keyEncryptionKeyId(key: Uint8Array): string {
  return createHash('sha256')
    .update('licensing-service/signing-key-encryption-key')
    .update(key)
    .digest('base64url')
    .slice(0, 12);
}
