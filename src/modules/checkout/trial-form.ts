import { AppError } from '../../platform/errors.js';
import type { BrandView } from '../brand/index.js';
import type { CheckoutProduct, CheckoutServiceDeps } from './deps.js';
import { type PageView, pageProduct } from './page-view.js';
import { checkoutPage, type PageOutcome, problemPage, trialStartedPage } from './pages.js';

/**
 * The trial form post's page, for a product on sale: the trial started, or the checkout page
 * again saying why not.
 */
export function createTrialForm({ trials, view }: Pick<CheckoutServiceDeps, 'trials'> & { view: PageView }) {
  return async function trialOutcome(
    product: CheckoutProduct,
    brand: BrandView | null,
    form: { email?: string; hwuid?: string },
  ): Promise<PageOutcome> {
    // The trial form of a product without a trial is a page that does not exist.
    if (product.trialDays === null)
      return {
        status: 404,
        page: problemPage('No free trial', 'This product does not offer a free trial.'),
      };
    const hwuid = form.hwuid?.trim() ? form.hwuid : null;
    const again = (status: number, error: string) => ({
      status,
      page: checkoutPage(view(product, brand, null, { trial: { hwuid, email: form.email, error } })),
    });
    const email = (form.email ?? '').trim();
    if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email) || email.length > 254)
      return again(422, 'Enter the e-mail address where you want to receive your trial key.');
    try {
      const trial = await trials.start({ productId: product.id, email, hwuid });
      return {
        status: 200,
        page: trialStartedPage({
          product: pageProduct(product),
          brand,
          licenseKey: trial.licenseKey,
          email: trial.email,
          days: trial.trialDays,
          endsAt: trial.expiresAt,
        }),
      };
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      if (['trial_already_used', 'license_already_owned', 'product_unavailable'].includes(error.code))
        return again(409, `${error.message}.`);
      throw error;
    }
  };
}
