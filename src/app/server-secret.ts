import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { type Config, IN_MEMORY_DATA_DIR } from '../platform/config.js';

/**
 * The secret that signs seller session tokens: JWT_SECRET when set, otherwise one generated
 * on first start and kept in DATA_DIR (readable by the owner only), so sessions survive a
 * restart of a single node. Several nodes must share JWT_SECRET (config enforces it in
 * production).
 */
export function resolveSessionSecret(config: Pick<Config, 'jwtSecret' | 'dataDir'>): string {
  return config.jwtSecret ?? generatedSecret(config.dataDir, 'jwt-secret');
}

/**
 * The secrets idempotency keys are hashed and their answers encrypted under (newest first):
 * IDEMPOTENCY_SECRET's when set, otherwise one generated into DATA_DIR like the session secret.
 * Several nodes must share them (config enforces it in production), or a retry landing on
 * another node would not find its key.
 */
export function resolveIdempotencySecrets(
  config: Pick<Config, 'idempotencySecrets' | 'dataDir'>,
): readonly string[] {
  return config.idempotencySecrets ?? [generatedSecret(config.dataDir, 'idempotency-secret')];
}

/**
 * The keys private signing keys are sealed under (the first seals, all open):
 * SIGNING_KEY_ENCRYPTION_KEY's when set, otherwise one generated into DATA_DIR. On the embedded
 * database that file sits beside the data it protects, so a copy of DATA_DIR holds both; set the
 * key from a secret store to keep it apart. Nodes over one database must share it (config
 * enforces it in production).
 */
export function resolveSigningKeyEncryptionKeys(
  config: Pick<Config, 'signingKeyEncryptionKeys' | 'dataDir'>,
): Buffer[] {
  const keys = config.signingKeyEncryptionKeys ?? [
    generatedSecret(config.dataDir, 'signing-key-encryption-key'),
  ];
  return keys.map((key) => Buffer.from(key, 'base64'));
}

/** A random secret kept in `DATA_DIR/<file>` from the first start on (in memory: a new one). */
function generatedSecret(dataDir: string, file: string): string {
  if (dataDir === IN_MEMORY_DATA_DIR) return randomBytes(32).toString('base64url');
  const where = path.join(dataDir, file);
  fs.mkdirSync(dataDir, { recursive: true });
  try {
    fs.writeFileSync(where, randomBytes(32).toString('base64url'), { flag: 'wx', mode: 0o600 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  const secret = fs.readFileSync(where, 'utf8').trim();
  if (secret.length < 32)
    throw new Error(`${where} holds no usable secret; delete it to have a new one generated`);
  return secret;
}
