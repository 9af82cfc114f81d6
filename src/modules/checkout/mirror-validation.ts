import { iso } from '../../platform/http/schemas.js';
import { normalizeLicenseKey } from '../licenses/index.js';
import type { CheckoutServiceDeps } from './deps.js';

/**
 * Mirror validate: a paid purchase matching the license and e-mail, whose license still
 * grants access. Every failure to match gets the same answer, so a caller learns nothing about
 * which half was wrong; only a caller who proved both learns that the license stopped.
 */
export function createMirrorValidation({ log, payments }: Pick<CheckoutServiceDeps, 'log' | 'payments'>) {
  const notVerified = <R extends { code: string; message: string }>(refusal: R) => {
    log.info({ code: refusal.code }, 'checkout.validate.not_verified');
    return { success: false as const, verified: false as const, status: 'not_verified' as const, ...refusal };
  };
  return async function validate(input: { license: string; email: string }) {
    const key = normalizeLicenseKey(input.license);
    const found = key ? await payments.findPaidPurchase(key, input.email) : null;
    if (!found) return notVerified(NO_PURCHASE);
    if (found.licenseStatus === 'trial') return notVerified(NO_PURCHASE);
    if (found.licenseStatus !== 'active') return notVerified(LICENSE_REFUSALS[found.licenseStatus]);
    const { order } = found;
    return {
      success: true as const,
      verified: true as const,
      status: 'successful' as const,
      purchase: {
        id: order.id,
        productId: order.product_id,
        createdAt: iso(order.created_at),
        transactionId: order.transaction_id,
        subscriptionId: order.subscription_id,
      },
    };
  };
}

const NO_PURCHASE = {
  code: 'purchase_not_verified',
  message: 'No paid purchase matches this license and e-mail',
} as const;

/** Why a paid purchase no longer validates: its license stopped (the codes verification uses). */
const LICENSE_REFUSALS = {
  revoked: { code: 'license_revoked', message: 'The license of this purchase was revoked' },
  suspended: { code: 'license_suspended', message: 'The license of this purchase is suspended' },
  expired: { code: 'license_expired', message: 'The license of this purchase has expired' },
} as const;
