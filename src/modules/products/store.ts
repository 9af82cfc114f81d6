import { sql } from 'kysely';
import type { Executor } from '../../platform/db/database.js';
import type { ProductRow, ProductsTable } from '../../platform/db/schema.js';
import { containsPattern } from '../../platform/db/text-search.js';
import type { Page } from '../../platform/http/schemas.js';
import { toDecimalString } from '../../platform/money.js';
import type { ProductState } from './product-rules.js';
import type { ProductFilter } from './schemas.js';

type ProductColumns = Omit<
  ProductsTable,
  'id' | 'user_id' | 'created_at' | 'updated_at' | 'license_policy'
> & {
  license_policy: string;
};

function toColumns(product: ProductState): ProductColumns {
  return {
    app_id: product.appId,
    name: product.name,
    description: product.description,
    price: toDecimalString(product.price, product.currency),
    currency: product.currency,
    active: product.active,
    success_url: product.successUrl,
    cancel_url: product.cancelUrl,
    help_url: product.helpUrl,
    support_url: product.supportUrl,
    terms_url: product.termsUrl,
    privacy_url: product.privacyUrl,
    refund_url: product.refundUrl,
    product_type: product.productType,
    billing_type: product.billingType,
    interval: product.interval,
    partner_price_id_recurring: product.partnerPriceIdRecurring,
    partner_tax_enabled: product.partnerTaxEnabled,
    partner_identity_required: product.partnerIdentityRequired,
    crypto_payments_enabled: product.cryptoPaymentsEnabled,
    hide_email: product.hideEmail,
    auto_redirect: product.autoRedirect,
    license_emails: product.licenseEmails,
    send_license_to_customer: product.sendLicenseToCustomer,
    callback_secret: product.callbackSecret,
    merchant_webhook_url: product.merchantWebhookUrl,
    features: product.features,
    trial_days: product.trialDays,
    portal_license_file_days: product.portalLicenseFileDays,
    portal_device_releases: product.portalDeviceReleases,
    portal_release_period_days: product.portalReleasePeriodDays,
    license_policy: JSON.stringify(product.licensePolicy),
  };
}

export function findProduct(
  executor: Executor,
  userId: string,
  id: string,
  options: { forUpdate?: boolean } = {},
): Promise<ProductRow | undefined> {
  const query = executor
    .selectFrom('products')
    .selectAll()
    .where('id', '=', id)
    .where('user_id', '=', userId);
  return (options.forUpdate ? query.forUpdate() : query).executeTakeFirst();
}

export function insertProduct(
  executor: Executor,
  product: ProductState & { id: string; userId: string; now: Date },
): Promise<ProductRow> {
  return executor
    .insertInto('products')
    .values({
      ...toColumns(product),
      id: product.id,
      user_id: product.userId,
      created_at: product.now,
      updated_at: product.now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export function saveProduct(
  executor: Executor,
  userId: string,
  id: string,
  product: ProductState,
  now: Date,
): Promise<ProductRow | undefined> {
  return executor
    .updateTable('products')
    .set({ ...toColumns(product), updated_at: now })
    .where('id', '=', id)
    .where('user_id', '=', userId)
    .returningAll()
    .executeTakeFirst();
}

export function setCallbackSecret(
  executor: Executor,
  userId: string,
  id: string,
  secret: string,
  now: Date,
): Promise<ProductRow | undefined> {
  return executor
    .updateTable('products')
    .set({ callback_secret: secret, updated_at: now })
    .where('id', '=', id)
    .where('user_id', '=', userId)
    .returningAll()
    .executeTakeFirst();
}

export async function deleteProduct(executor: Executor, userId: string, id: string): Promise<boolean> {
  const row = await executor
    .deleteFrom('products')
    .where('id', '=', id)
    .where('user_id', '=', userId)
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

export async function listProducts(
  executor: Executor,
  userId: string,
  filter: ProductFilter & { onlyAppId: string | null },
  page: Page,
) {
  let query = executor.selectFrom('products').where('user_id', '=', userId);
  if (filter.onlyAppId) query = query.where('app_id', '=', filter.onlyAppId);
  if (filter.appId) query = query.where('app_id', '=', filter.appId);
  if (filter.active !== undefined) query = query.where('active', '=', filter.active);
  if (filter.productType) query = query.where('product_type', '=', filter.productType);
  if (filter.billingType) query = query.where('billing_type', '=', filter.billingType);
  if (filter.currency) query = query.where('currency', '=', filter.currency.toUpperCase());
  if (filter.q)
    query = query.where(sql<string>`lower(name)`, 'like', containsPattern(filter.q.toLowerCase()));
  const [rows, total] = await Promise.all([
    query.selectAll().orderBy('created_at').orderBy('id').limit(page.limit).offset(page.offset).execute(),
    query.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(total.total) };
}

export function findProductById(executor: Executor, id: string): Promise<ProductRow | undefined> {
  return executor.selectFrom('products').selectAll().where('id', '=', id).executeTakeFirst();
}

/** A product with its seller's current tier, which decides the tier-gated checkout features. */
export async function findProductWithSellerTier(executor: Executor, id: string) {
  const row = await executor
    .selectFrom('products as p')
    .innerJoin('users as u', 'u.id', 'p.user_id')
    .selectAll('p')
    .select('u.tier as seller_tier')
    .where('p.id', '=', id)
    .executeTakeFirst();
  if (!row) return undefined;
  const { seller_tier: tier, ...product } = row;
  return { row: product as ProductRow, tier };
}
