import type { Clock } from '../../platform/clock.js';
import type { Db } from '../../platform/db/database.js';
import { AppError, notFound } from '../../platform/errors.js';
import { isUuid } from '../../platform/ids.js';
import type { Log } from '../../platform/log.js';
import type { LicenseService } from '../licenses/index.js';
import type { ProductService } from '../products/index.js';
import { queueTrialNotice } from './trial-store.js';

const DAY_MS = 86_400_000;

/** A trial as the buyer and their software receive it. */
export interface StartedTrial {
  licenseKey: string;
  productId: string;
  email: string;
  status: 'TRIAL';
  expiresAt: string;
  trialDays: number;
  hwBound: boolean;
}

export type Trials = ReturnType<typeof createTrials>;

/**
 * Starting a product's free trial from the hosted checkout: no payment, one trial per e-mail and
 * per device (the license module's claims decide that, in the issuing transaction), the key
 * mailed to the buyer and license.created to the seller's webhooks. The buyer's payment later
 * converts the trial (payments' fulfilment).
 */
export function createTrials({
  db,
  clock,
  log,
  products,
  licenses,
}: {
  db: Db;
  clock: Clock;
  log: Log;
  products: Pick<ProductService, 'forCheckout'>;
  licenses: Pick<LicenseService, 'issueTrial' | 'holdsPaidLicense'>;
}) {
  /** The product a trial may start on now, or the reason it cannot. */
  async function trialProduct(productId: string) {
    const product = isUuid(productId) ? await products.forCheckout(productId) : null;
    if (!product) throw notFound('Product');
    if (!product.active) throw new AppError('product_unavailable', 'This product is no longer on sale');
    if (product.trialDays === null)
      throw new AppError('product_unavailable', 'This product offers no free trial', [
        { field: 'productId', message: 'offers no free trial' },
      ]);
    return { ...product, trialDays: product.trialDays };
  }

  return {
    trialProduct,

    async start(input: { productId: string; email: string; hwuid?: string | null }): Promise<StartedTrial> {
      const product = await trialProduct(input.productId);
      const email = input.email.trim();
      const hwuid = input.hwuid ?? null;
      // Checked before the transaction: a purchase racing this start is the buyer's own doing.
      if (await licenses.holdsPaidLicense(product.id, email))
        throw new AppError(
          'license_already_owned',
          'This e-mail address already holds a license of this product',
          [{ field: 'email', message: 'already holds a license of this product' }],
        );
      const now = clock.now();
      const endsAt = new Date(now.getTime() + product.trialDays * DAY_MS);
      const license = await db.transaction().execute(async (trx) => {
        const issued = await licenses.issueTrial(trx, {
          appId: product.appId,
          userId: product.userId,
          productId: product.id,
          email,
          hwuid,
          endsAt,
          now,
        });
        await queueTrialNotice(trx, {
          userId: product.userId,
          productId: product.id,
          productName: product.name,
          email,
          licenseKey: issued.key,
          trialDays: product.trialDays,
          endsAt,
          now,
        });
        return issued;
      });
      log.info({ licenseId: license.id, productId: product.id }, 'trial.started');
      return {
        licenseKey: license.key,
        productId: product.id,
        email,
        status: 'TRIAL',
        expiresAt: endsAt.toISOString(),
        trialDays: product.trialDays,
        hwBound: hwuid !== null,
      };
    },
  };
}
