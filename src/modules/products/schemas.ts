import Type, { type Static } from 'typebox';
import { Email, HttpUrl, Nullable, PageQuery, Text, Timestamp, Uuid } from '../../platform/http/schemas.js';
import { LicensePolicyInput, LicensePolicySchema } from './license-policy.js';

export const PRODUCT_TYPES = ['license', 'api_access', 'subscription'] as const;
export const BILLING_TYPES = ['one_time', 'recurring'] as const;
export const INTERVALS = ['month', 'year'] as const;

export const MAX_PRICE = 1_000_000_000;

/** One entitlement: a name client software gates a feature on. */
export const FeatureName = Type.String({
  pattern: '^[a-z0-9][a-z0-9_.:-]{0,63}$',
  errorMessage: 'must be 1 to 64 characters of a-z, 0-9, _, ., : and -, starting with a letter or digit',
});
/** Entitlements, as products and licenses carry them: distinct names, at most 64. */
export const FeatureList = Type.Array(FeatureName, {
  maxItems: 64,
  uniqueItems: true,
  errorMessage: 'must be a list of at most 64 distinct feature names',
});

const Price = Type.Number({
  exclusiveMinimum: 0,
  maximum: MAX_PRICE,
  errorMessage: `must be a number greater than 0 and at most ${MAX_PRICE}`,
});
const Currency = Type.String({
  pattern: '^[A-Za-z]{3}$',
  errorMessage: 'must be a three-letter ISO 4217 currency code',
});
/** Days of free trial the hosted checkout offers; null: no trial. */
const TrialDays = Nullable(
  Type.Integer({
    minimum: 1,
    maximum: 365,
    errorMessage: 'must be a whole number of days from 1 to 365, or null',
  }),
);
/**
 * What buyers may do in the portal, per product; a license without a product gets these
 * defaults. A file is valid a month, and a buyer may free up to three device places in any
 * 30 days (a new laptop, a reinstall and a slip), so one place serves at most four machines a month.
 */
export const PORTAL_POLICY_DEFAULTS = {
  portalLicenseFileDays: 30,
  portalDeviceReleases: 3,
  portalReleasePeriodDays: 30,
} as const;
const PortalLicenseFileDays = Type.Integer({
  minimum: 1,
  maximum: 3650,
  errorMessage: 'must be a whole number of days from 1 to 3650',
});
const PortalDeviceReleases = Type.Integer({
  minimum: 0,
  maximum: 1000,
  errorMessage: 'must be a whole number from 0 to 1000',
});
const PortalReleasePeriodDays = Type.Integer({
  minimum: 1,
  maximum: 365,
  errorMessage: 'must be a whole number of days from 1 to 365',
});
const SecretText = Type.String({
  minLength: 32,
  maxLength: 256,
  pattern: '^[\\x21-\\x7e]+$',
  errorMessage: 'must be 32 to 256 printable characters without spaces',
});

/** Every field a seller may write, each optional; create and replace add their requirements. */
const writable = {
  appId: Uuid,
  name: Text(200),
  description: Type.String({ maxLength: 5000 }),
  price: Price,
  currency: Currency,
  active: Type.Boolean(),
  successUrl: Nullable(HttpUrl),
  cancelUrl: Nullable(HttpUrl),
  helpUrl: Nullable(HttpUrl),
  supportUrl: Nullable(HttpUrl),
  termsUrl: Nullable(HttpUrl),
  privacyUrl: Nullable(HttpUrl),
  refundUrl: Nullable(HttpUrl),
  productType: Type.Enum(PRODUCT_TYPES),
  billingType: Type.Enum(BILLING_TYPES),
  interval: Nullable(Type.Enum(INTERVALS)),
  partnerPriceIdRecurring: Nullable(Type.String({ minLength: 1, maxLength: 255 })),
  partnerTaxEnabled: Type.Boolean(),
  partnerIdentityRequired: Type.Boolean(),
  cryptoPaymentsEnabled: Type.Boolean(),
  hideEmail: Type.Boolean(),
  autoRedirect: Type.Boolean(),
  licenseEmails: Type.Array(Email, { maxItems: 20, uniqueItems: true }),
  sendLicenseToCustomer: Type.Boolean(),
  callbackSecret: SecretText,
  merchantWebhookUrl: Nullable(HttpUrl),
  features: FeatureList,
  trialDays: TrialDays,
  portalLicenseFileDays: PortalLicenseFileDays,
  portalDeviceReleases: PortalDeviceReleases,
  portalReleasePeriodDays: PortalReleasePeriodDays,
  licensePolicy: LicensePolicyInput,
};

type Writable = typeof writable;
const allOptional = Object.fromEntries(
  Object.entries(writable).map(([key, schema]) => [key, Type.Optional(schema)]),
) as {
  [K in keyof Writable]: ReturnType<typeof Type.Optional<Writable[K]>>;
};

/** Create and PUT: name, price and currency are required; everything else has a default. */
export const ProductCreate = Type.Object(
  { ...allOptional, name: writable.name, price: writable.price, currency: writable.currency },
  { additionalProperties: false },
);
export const ProductReplace = ProductCreate;

/** PATCH: any subset of the fields, at least one. */
export const ProductPatch = Type.Object(allOptional, { additionalProperties: false, minProperties: 1 });

export type ProductInput = Static<typeof ProductPatch>;

export const Product = Type.Object({
  id: Uuid,
  userId: Uuid,
  appId: Uuid,
  name: Type.String(),
  description: Type.String(),
  price: Type.Number(),
  currency: Type.String(),
  active: Type.Boolean(),
  successUrl: Nullable(Type.String()),
  cancelUrl: Nullable(Type.String()),
  helpUrl: Nullable(Type.String()),
  supportUrl: Nullable(Type.String()),
  termsUrl: Nullable(Type.String()),
  privacyUrl: Nullable(Type.String()),
  refundUrl: Nullable(Type.String()),
  productType: Type.Enum(PRODUCT_TYPES),
  billingType: Type.Enum(BILLING_TYPES),
  interval: Nullable(Type.Enum(INTERVALS)),
  partnerPriceIdRecurring: Nullable(Type.String()),
  partnerTaxEnabled: Type.Boolean(),
  partnerIdentityRequired: Type.Boolean(),
  cryptoPaymentsEnabled: Type.Boolean(),
  hideEmail: Type.Boolean(),
  autoRedirect: Type.Boolean(),
  licenseEmails: Type.Array(Type.String()),
  sendLicenseToCustomer: Type.Boolean(),
  callbackSecret: Type.String(),
  merchantWebhookUrl: Nullable(Type.String()),
  /** Entitlements every license of this product has, unless the license overrides them. */
  features: Type.Array(Type.String()),
  /** Days of the free trial the hosted checkout offers (a trial license per e-mail and device); null: none. */
  trialDays: Nullable(Type.Integer()),
  /** Days a license file the buyer downloads from the portal is valid (never past the license). */
  portalLicenseFileDays: Type.Integer(),
  /** Device releases a buyer may make from the portal per license, in any portalReleasePeriodDays. */
  portalDeviceReleases: Type.Integer(),
  portalReleasePeriodDays: Type.Integer(),
  /** What every license sold, trialled or issued through the product starts from (a copy is kept). */
  licensePolicy: LicensePolicySchema,
  /** The hosted checkout page that sells this product, to link to from the seller's site. */
  checkoutUrl: Type.String(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type ProductResource = Static<typeof Product>;

export const ProductParams = Type.Object({ id: Uuid }, { additionalProperties: false });

export const ProductListQuery = Type.Object(
  {
    ...PageQuery,
    active: Type.Optional(Type.Boolean()),
    productType: Type.Optional(Type.Enum(PRODUCT_TYPES)),
    billingType: Type.Optional(Type.Enum(BILLING_TYPES)),
    currency: Type.Optional(Currency),
    appId: Type.Optional(Uuid),
    q: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  },
  { additionalProperties: false },
);
export type ProductFilter = Omit<Static<typeof ProductListQuery>, 'limit' | 'offset'>;

export const ProductList = Type.Object({
  products: Type.Array(Product),
  total: Type.Integer(),
  limit: Type.Integer(),
  offset: Type.Integer(),
});
