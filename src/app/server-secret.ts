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
  if (config.jwtSecret) return config.jwtSecret;
  if (config.dataDir === IN_MEMORY_DATA_DIR) return randomBytes(32).toString('base64url');
  const file = path.join(config.dataDir, 'jwt-secret');
  fs.mkdirSync(config.dataDir, { recursive: true });
  try {
    fs.writeFileSync(file, randomBytes(32).toString('base64url'), { flag: 'wx', mode: 0o600 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  const secret = fs.readFileSync(file, 'utf8').trim();
  if (secret.length < 32)
    throw new Error(`${file} holds no usable secret; delete it to have a new one generated`);
  return secret;
}
