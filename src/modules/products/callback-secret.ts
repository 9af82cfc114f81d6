import { randomBytes } from 'node:crypto';

/**
 * A product's callback secret signs mirror redirects and checkout merchant webhooks. Generated
 * ones carry 256 bits from the CSPRNG behind a recognisable prefix.
 */
export function generateCallbackSecret(): string {
  return `cbs_${randomBytes(32).toString('base64url')}`;
}
