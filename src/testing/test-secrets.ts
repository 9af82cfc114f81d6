/**
 * The signing-key encryption key every test service shares (SIGNING_KEY_ENCRYPTION_KEY): test
 * servers and processes over one PostgreSQL database open each other's signing keys, as the
 * nodes of a deployment do. Tests of the setting itself give their own.
 */
export const TEST_SIGNING_KEY_ENCRYPTION_KEY = Buffer.alloc(32, 'test-signing-key-encryption-key').toString(
  'base64',
);
