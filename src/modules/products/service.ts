import type { Clock } from '../../platform/clock.js';
import type { Db, Executor } from '../../platform/db/database.js';
import { isStillReferenced } from '../../platform/db/errors.js';
import type { ProductRow } from '../../platform/db/schema.js';
import { AppError, invalidField, notFound } from '../../platform/errors.js';
import { type IdempotentAnswer, transactionWithAnswer } from '../../platform/http/idempotency.js';
import { apiKeyAppId, type Principal, visibleTo } from '../../platform/http/principal.js';
import { iso, type Page } from '../../platform/http/schemas.js';
import { newId } from '../../platform/ids.js';
import type { Log } from '../../platform/log.js';
import { fromDecimalString } from '../../platform/money.js';
import type { AppService } from '../apps/index.js';
import { tierAtLeast } from '../users/index.js';
import { refuseUrl, type TargetPolicy } from '../webhooks/index.js';
import { generateCallbackSecret } from './callback-secret.js';
import { completePolicy, type LicensePolicyInputValue, storedPolicy } from './license-policy.js';
import { checkProductRules, checkTierGates, PRODUCT_DEFAULTS, type ProductState } from './product-rules.js';
import type { ProductFilter, ProductInput, ProductResource } from './schemas.js';
import * as store from './store.js';

export interface ProductServiceDeps {
  db: Db;
  clock: Clock;
  log: Log;
  apps: Pick<AppService, 'requireOwnedApp'>;
  /** The checkout host's public address, for each product's checkout link. */
  payUrl: string;
  /** Where merchant webhooks may be sent: the same guard as the seller's own webhooks. */
  webhookTargets: TargetPolicy;
  /**
   * The verification cache: a change of a product's features is announced in its transaction
   * as a change of the seller's licenses (rare, so the whole seller is dropped).
   */
  licenseChanges: {
    announceSeller(executor: Executor, sellerId: string): Promise<unknown>;
    forgetSeller(sellerId: string): void;
  };
}

export type ProductService = ReturnType<typeof createProductService>;

/** A product's next state as a change writes it: the policy as written, completed by prepare. */
type ProductDraft = Omit<ProductState, 'licensePolicy'> & { licensePolicy: LicensePolicyInputValue };

export function createProductService({
  db,
  clock,
  log,
  apps,
  payUrl,
  webhookTargets,
  licenseChanges,
}: ProductServiceDeps) {
  const present = (row: ProductRow): ProductResource => ({
    ...toProduct(row),
    checkoutUrl: `${payUrl}/checkout/${row.id}`,
  });

  /** The seller's product, visible to an API key only when it belongs to the key's app. */
  async function requireOwnedProduct(principal: Principal, id: string): Promise<ProductRow> {
    return visibleTo(principal, await store.findProduct(db, principal.userId, id), 'Product');
  }

  /** Validates the product as it would be after the change, then the tier of what changes. */
  function prepare(
    principal: Principal,
    input: ProductInput,
    next: ProductDraft,
    current: Partial<ProductState>,
  ): ProductState {
    const state = {
      ...next,
      currency: next.currency.toUpperCase(),
      licensePolicy: completePolicy(next.licensePolicy),
    };
    // Only a URL being set is checked: a stored one is checked again before every delivery.
    const refused = input.merchantWebhookUrl ? refuseUrl(input.merchantWebhookUrl, webhookTargets) : null;
    if (refused) throw invalidField('merchantWebhookUrl', refused);
    checkProductRules(state);
    checkTierGates(principal.tier, input, current);
    return state;
  }

  /**
   * Reads the product under a row lock, works out its next state and saves it, in one
   * transaction: concurrent changes (a secret rotation among them) apply one after the other,
   * and none is lost to a write made from a stale read.
   */
  async function change(
    principal: Principal,
    id: string,
    input: ProductInput,
    nextOf: (current: ProductState) => ProductDraft,
  ) {
    const owned = await requireOwnedProduct(principal, id);
    // Checked before the transaction: the embedded database has one connection.
    if (input.appId && input.appId !== owned.app_id) await apps.requireOwnedApp(principal, input.appId);
    let featuresChanged = false;
    const row = await db
      .transaction()
      .execute(async (trx) => {
        const locked = await store.findProduct(trx, principal.userId, id, { forUpdate: true });
        if (!locked) throw notFound('Product');
        const current = stateOf(locked);
        const next = prepare(principal, input, nextOf(current), current);
        const saved = await store.saveProduct(trx, principal.userId, id, next, clock.now());
        // Licenses of this product verify with its features: announced with the change.
        featuresChanged = saved !== undefined && !sameList(current.features, next.features);
        if (featuresChanged) await licenseChanges.announceSeller(trx, principal.userId);
        return saved;
      })
      .catch((error: unknown) => {
        if (!isStillReferenced(error)) throw error;
        throw new AppError(
          'product_in_use',
          'Licenses are linked to this product; it cannot move to another app',
        );
      });
    if (featuresChanged) licenseChanges.forgetSeller(principal.userId);
    if (!row) throw notFound('Product');
    return present(row);
  }

  return {
    /**
     * What a buyer's checkout needs of a product, by id alone (no seller credentials). Tier-gated
     * features count only while the seller's current tier allows them, so a seller whose tier
     * dropped keeps the product but not the features. Never the callback secret.
     */
    async forCheckout(id: string) {
      const found = await store.findProductWithSellerTier(db, id);
      if (!found) return null;
      const { row, tier } = found;
      const enterprise = tierAtLeast(tier, 'enterprise');
      return {
        id: row.id,
        userId: row.user_id,
        appId: row.app_id,
        name: row.name,
        description: row.description,
        active: row.active,
        exactPrice: row.price,
        currency: row.currency,
        productType: row.product_type,
        billingType: row.billing_type,
        interval: row.interval,
        partnerPriceIdRecurring: row.partner_price_id_recurring,
        successUrl: row.success_url,
        cancelUrl: row.cancel_url,
        links: {
          help: row.help_url,
          support: row.support_url,
          terms: row.terms_url,
          privacy: row.privacy_url,
          refund: row.refund_url,
        },
        cryptoPayments: row.crypto_payments_enabled && tierAtLeast(tier, 'business'),
        hideEmail: row.hide_email && enterprise,
        autoRedirect: row.auto_redirect && enterprise,
        sendLicenseToCustomer: row.send_license_to_customer && enterprise,
        licenseEmails: enterprise ? row.license_emails : [],
        trialDays: row.trial_days,
        licensePolicy: storedPolicy(row.license_policy),
      };
    },

    /** The product's callback secret, for the checkout host's signing and strict-mode payloads. */
    async callbackSecretOf(id: string): Promise<string | null> {
      const row = await store.findProductById(db, id);
      return row?.callback_secret ?? null;
    },

    /**
     * What a license issued by hand under a product of the caller starts from: the product's app
     * and license policy, or null when the caller cannot see the product.
     */
    async licenseTerms(principal: Principal, id: string) {
      const row = await store.findProduct(db, principal.userId, id);
      const keyApp = apiKeyAppId(principal);
      return row && (!keyApp || keyApp === row.app_id) ? licenseTermsOf(row) : null;
    },

    /** The same, for a route about the product itself: 404 when unknown, 403 for another app's key. */
    requireLicenseTerms: async (principal: Principal, id: string) =>
      licenseTermsOf(await requireOwnedProduct(principal, id)),

    async create(
      principal: Principal,
      input: ProductInput & Pick<ProductState, 'name' | 'price' | 'currency'>,
      answer?: IdempotentAnswer<ProductResource>,
    ) {
      const appId = input.appId ?? apiKeyAppId(principal);
      if (!appId) throw invalidField('appId', 'is required: the app whose licenses this product sells');
      await apps.requireOwnedApp(principal, appId);
      const state = prepare(
        principal,
        input,
        {
          ...PRODUCT_DEFAULTS,
          licenseEmails: [],
          features: [],
          ...input,
          appId,
          callbackSecret: input.callbackSecret ?? generateCallbackSecret(),
        },
        { ...PRODUCT_DEFAULTS },
      );
      const created = await transactionWithAnswer(db, answer, async (trx) =>
        present(
          await store.insertProduct(trx, {
            ...state,
            id: newId(),
            userId: principal.userId,
            now: clock.now(),
          }),
        ),
      );
      log.info({ productId: created.id, appId: created.appId }, 'product.created');
      return created;
    },

    get: async (principal: Principal, id: string) => present(await requireOwnedProduct(principal, id)),

    async list(principal: Principal, filter: ProductFilter, page: Page) {
      const { rows, total } = await store.listProducts(
        db,
        principal.userId,
        { ...filter, onlyAppId: apiKeyAppId(principal) },
        page,
      );
      return { products: rows.map(present), total, ...page };
    },

    /** PUT: the product becomes what the body says; omitted fields return to their defaults. */
    async replace(
      principal: Principal,
      id: string,
      input: ProductInput & Pick<ProductState, 'name' | 'price' | 'currency'>,
    ) {
      return change(principal, id, input, (current) => ({
        ...PRODUCT_DEFAULTS,
        licenseEmails: [],
        features: [],
        ...input,
        // The app and the secret are kept unless given: neither has a meaningful default.
        appId: input.appId ?? current.appId,
        callbackSecret: input.callbackSecret ?? current.callbackSecret,
      }));
    },

    /** PATCH: only the fields given change. */
    async update(principal: Principal, id: string, input: ProductInput) {
      return change(principal, id, input, (current) => ({ ...current, ...input }));
    },

    async rotateCallbackSecret(principal: Principal, id: string) {
      await requireOwnedProduct(principal, id);
      const row = await store.setCallbackSecret(
        db,
        principal.userId,
        id,
        generateCallbackSecret(),
        clock.now(),
      );
      if (!row) throw notFound('Product');
      log.info({ productId: id }, 'product.callback_secret.rotated');
      return present(row);
    },

    /**
     * Deletes a product nothing refers to. Licenses, subscriptions and orders reference their
     * product without cascading, so the database itself refuses the delete while any exist.
     */
    async remove(principal: Principal, id: string) {
      await requireOwnedProduct(principal, id);
      try {
        if (!(await store.deleteProduct(db, principal.userId, id))) throw notFound('Product');
      } catch (error) {
        if (!isStillReferenced(error)) throw error;
        throw new AppError(
          'product_in_use',
          'Licenses or subscriptions are linked to this product; deactivate it (active: false) instead',
        );
      }
      log.info({ productId: id }, 'product.deleted');
    },
  };
}

const licenseTermsOf = (row: ProductRow) => ({
  appId: row.app_id,
  licensePolicy: storedPolicy(row.license_policy),
});

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((item, i) => item === b[i]);
}

function stateOf(row: ProductRow): ProductState {
  const { id: _id, userId: _userId, createdAt: _createdAt, updatedAt: _updatedAt, ...state } = toProduct(row);
  return state;
}

export function toProduct(row: ProductRow): Omit<ProductResource, 'checkoutUrl'> {
  return {
    id: row.id,
    userId: row.user_id,
    appId: row.app_id,
    name: row.name,
    description: row.description,
    price: fromDecimalString(row.price),
    currency: row.currency,
    active: row.active,
    successUrl: row.success_url,
    cancelUrl: row.cancel_url,
    helpUrl: row.help_url,
    supportUrl: row.support_url,
    termsUrl: row.terms_url,
    privacyUrl: row.privacy_url,
    refundUrl: row.refund_url,
    productType: row.product_type,
    billingType: row.billing_type,
    interval: row.interval,
    partnerPriceIdRecurring: row.partner_price_id_recurring,
    partnerTaxEnabled: row.partner_tax_enabled,
    partnerIdentityRequired: row.partner_identity_required,
    cryptoPaymentsEnabled: row.crypto_payments_enabled,
    hideEmail: row.hide_email,
    autoRedirect: row.auto_redirect,
    licenseEmails: row.license_emails,
    sendLicenseToCustomer: row.send_license_to_customer,
    callbackSecret: row.callback_secret,
    merchantWebhookUrl: row.merchant_webhook_url,
    features: row.features,
    trialDays: row.trial_days,
    portalLicenseFileDays: row.portal_license_file_days,
    portalDeviceReleases: row.portal_device_releases,
    portalReleasePeriodDays: row.portal_release_period_days,
    licensePolicy: storedPolicy(row.license_policy),
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  };
}
