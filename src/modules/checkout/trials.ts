import type { Clock } from '../../platform/clock.js';
import type { Db } from '../../platform/db/database.js';
import { AppError, notFound } from '../../platform/errors.js';
import { type IdempotentAnswer, transactionWithAnswer } from '../../platform/http/idempotency.js';
import { isUuid } from '../../platform/ids.js';
import type { Log } from '../../platform/log.js';
import { recordEvent } from '../events/index.js';
import type { LicenseService } from '../licenses/index.js';
import type { ProductService } from '../products/index.js';
import { queueTrialNotice } from './trial-store.js';

const DAY_MS = 86_400_000;

/**
 * A trial as the buyer and their software receive it. The key is in the answer only for a trial
 * on a device, which it is bound to; a trial by e-mail's key goes to that address alone, so only
 * whoever reads it holds the trial.
 */
export interface StartedTrial {
  trialId: string;
  licenseKey: string | null;
  productId: string;
  email: string;
  status: 'TRIAL';
  expiresAt: string;
  trialDays: number;
  hwBound: boolean;
}

export type Trials = ReturnType<typeof createTrials>;

/**
 * Starting a product's free trial from the hosted checkout: no payment. A trial by e-mail (no
 * hwuid) or on a device (bound to it); the license module's claims keep one trial per address and
 * per device, in the issuing transaction. The key is mailed to the address, and license.created
 * and trial.started go to the seller's webhooks. The buyer's payment later issues a new license and ends the
 * trial (payments' fulfilment).
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

    async start(
      input: { productId: string; email: string; hwuid?: string | null },
      answer?: IdempotentAnswer<StartedTrial>,
    ): Promise<StartedTrial> {
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
      const trial = await transactionWithAnswer(db, answer, async (trx): Promise<StartedTrial> => {
        const issued = await licenses.issueTrial(trx, {
          appId: product.appId,
          userId: product.userId,
          productId: product.id,
          email,
          hwuid,
          policy: product.licensePolicy,
          endsAt,
          now,
        });
        await recordEvent(trx, {
          type: 'trial.started',
          userId: product.userId,
          appId: product.appId,
          occurredAt: now,
          data: {
            id: issued.id,
            licenseKey: issued.key,
            productId: product.id,
            email,
            hwuid,
            trialDays: product.trialDays,
            expiresAt: endsAt.toISOString(),
            createdAt: issued.created_at.toISOString(),
          },
        });
        await queueTrialNotice(trx, {
          userId: product.userId,
          productId: product.id,
          productName: product.name,
          email,
          licenseKey: issued.key,
          licenseId: issued.id,
          trialDays: product.trialDays,
          endsAt,
          now,
        });
        return {
          trialId: issued.id,
          licenseKey: hwuid !== null ? issued.key : null,
          productId: product.id,
          email,
          status: 'TRIAL',
          expiresAt: endsAt.toISOString(),
          trialDays: product.trialDays,
          hwBound: hwuid !== null,
        };
      });
      log.info({ licenseId: trial.trialId, productId: product.id }, 'trial.started');
      return trial;
    },
  };
}
