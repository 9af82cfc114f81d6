import { AppError, type ErrorDetail } from '../../platform/errors.js';
import type { Tier } from '../../platform/http/principal.js';
import { currencyExponent, decimalPlaces, isSupportedCurrency } from '../../platform/money.js';
import { tierAtLeast } from '../users/index.js';
import { policyProblems, UNLIMITED_POLICY } from './license-policy.js';
import { PORTAL_POLICY_DEFAULTS, type ProductInput, type ProductResource } from './schemas.js';

/** A product's writable state, as the rules see it. */
export type ProductState = Omit<ProductResource, 'id' | 'userId' | 'checkoutUrl' | 'createdAt' | 'updatedAt'>;

/** What a field is when a create or a PUT leaves it out. */
export const PRODUCT_DEFAULTS = {
  description: '',
  active: true,
  successUrl: null,
  cancelUrl: null,
  helpUrl: null,
  supportUrl: null,
  termsUrl: null,
  privacyUrl: null,
  refundUrl: null,
  productType: 'license',
  billingType: 'one_time',
  interval: null,
  partnerPriceIdRecurring: null,
  partnerTaxEnabled: false,
  partnerIdentityRequired: false,
  cryptoPaymentsEnabled: false,
  hideEmail: false,
  autoRedirect: false,
  licenseEmails: [],
  features: [],
  trialDays: null,
  sendLicenseToCustomer: false,
  merchantWebhookUrl: null,
  licensePolicy: UNLIMITED_POLICY,
  ...PORTAL_POLICY_DEFAULTS,
} as const satisfies Partial<ProductState>;

/**
 * How the fields must agree, checked on the product as it would be after the change:
 * - the currency is a sellable ISO 4217 code and the price has no more decimals than it allows;
 * - recurring billing needs an interval, one-time billing has none;
 * - a subscription product bills on a recurring basis;
 * - a card partner price id only applies to recurring products;
 * - a trial issues a license to install, so only license and subscription products offer one;
 * - the license policy takes the fields of its model, and validity only on one-time billing.
 */
export function checkProductRules(product: ProductState): void {
  const details: ErrorDetail[] = [];
  if (!isSupportedCurrency(product.currency)) {
    details.push({ field: 'currency', message: 'is not a supported ISO 4217 currency code' });
  } else {
    const allowed = currencyExponent(product.currency) ?? 0;
    if (decimalPlaces(product.price) > allowed) {
      details.push({
        field: 'price',
        message:
          allowed === 0
            ? `${product.currency} amounts have no decimals`
            : `${product.currency} allows at most ${allowed} decimal places`,
      });
    }
  }
  if (product.billingType === 'recurring' && product.interval === null) {
    details.push({ field: 'interval', message: 'is required for recurring products (month or year)' });
  }
  if (product.billingType === 'one_time' && product.interval !== null) {
    details.push({ field: 'interval', message: 'must be null for one-time products' });
  }
  if (product.productType === 'subscription' && product.billingType !== 'recurring') {
    details.push({ field: 'billingType', message: 'must be recurring for subscription products' });
  }
  if (product.billingType === 'one_time' && product.partnerPriceIdRecurring !== null) {
    details.push({ field: 'partnerPriceIdRecurring', message: 'only applies to recurring products' });
  }
  if (product.trialDays !== null && !TRIAL_PRODUCT_TYPES.includes(product.productType)) {
    details.push({
      field: 'trialDays',
      message: `a ${product.productType} product cannot offer a trial (only license and subscription products)`,
    });
  }
  details.push(...policyProblems(product.licensePolicy, product.billingType));
  if (details.length > 0) {
    throw new AppError(
      'validation_failed',
      details.map((d) => `${d.field}: ${d.message}`).join('; '),
      details,
    );
  }
}

/** The product types whose buyers install software a trial license can unlock. */
export const TRIAL_PRODUCT_TYPES: readonly ProductState['productType'][] = ['license', 'subscription'];

interface Gate {
  field: keyof ProductInput;
  tier: Tier;
  /** Whether this value turns the feature on (its default value never needs the tier). */
  enables(value: unknown): boolean;
}

const enabled = (value: unknown) => value === true;

export const TIER_GATES: readonly Gate[] = [
  { field: 'cryptoPaymentsEnabled', tier: 'business', enables: enabled },
  { field: 'hideEmail', tier: 'enterprise', enables: enabled },
  { field: 'autoRedirect', tier: 'enterprise', enables: enabled },
  {
    field: 'licenseEmails',
    tier: 'enterprise',
    enables: (value) => Array.isArray(value) && value.length > 0,
  },
  { field: 'sendLicenseToCustomer', tier: 'enterprise', enables: enabled },
  // Any secret the seller chooses; the generated one and rotation are open to every tier.
  { field: 'callbackSecret', tier: 'enterprise', enables: (value) => typeof value === 'string' },
];

/**
 * Refuses, with 403 tier_required naming each field, a request that turns on or changes a
 * feature above the seller's tier. Values that stay as they are pass, so a seller whose tier
 * dropped can still send back the product they read.
 */
export function checkTierGates(tier: Tier, input: ProductInput, current: Partial<ProductState>): void {
  const refused = TIER_GATES.filter((gate) => {
    const value = input[gate.field];
    if (value === undefined || !gate.enables(value) || tierAtLeast(tier, gate.tier)) return false;
    return JSON.stringify(value) !== JSON.stringify(current[gate.field as keyof ProductState]);
  });
  if (refused.length === 0) return;
  const details = refused.map((gate) => ({ field: gate.field, message: `needs the ${gate.tier} tier` }));
  throw new AppError(
    'tier_required',
    `${details.map((d) => `${d.field} ${d.message}`).join('; ')} (current tier: ${tier})`,
    details,
  );
}
