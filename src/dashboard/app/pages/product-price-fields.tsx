import type { ApiError } from '../api';
import { optionsOf, SelectField, TextField } from '../components/form';
import { words } from '../format';
import { BILLING_TYPES, PRODUCT_TYPES, type Product } from '../types';

/** What a product costs and how it is billed, as the form holds it: numbers as typed. */
export interface PriceDraft {
  price: string;
  currency: string;
  productType: string;
  billingType: string;
  interval: string;
  partnerPriceIdRecurring: string;
  trialDays: string;
}

export function priceDraftOf(product: Product | null): PriceDraft {
  return {
    price: product ? String(product.price) : '',
    currency: product?.currency ?? 'USD',
    productType: product?.productType ?? 'license',
    billingType: product?.billingType ?? 'one_time',
    interval: product?.interval ?? '',
    partnerPriceIdRecurring: product?.partnerPriceIdRecurring ?? '',
    trialDays: product?.trialDays == null ? '' : String(product.trialDays),
  };
}

/** The price and billing as the API's product fields; empty optional text becomes null. */
export function priceBody(draft: PriceDraft): Record<string, unknown> {
  const price = draft.price.trim() === '' ? null : Number(draft.price);
  return {
    price,
    currency: draft.currency.trim(),
    productType: draft.productType,
    billingType: draft.billingType,
    interval: draft.interval || null,
    partnerPriceIdRecurring: draft.partnerPriceIdRecurring.trim() || null,
    // Sent as typed: a value that is not 1 to 365 comes back as the API's error on the field.
    trialDays: draft.trialDays.trim() === '' ? null : Number(draft.trialDays),
  };
}

interface Fields {
  value: PriceDraft;
  onValue(value: PriceDraft): void;
  error: ApiError | null;
}

/** The price and its currency, side by side. */
export function PriceFields({ value, onValue, error }: Fields) {
  return (
    <div class="row">
      <TextField
        label="Price"
        name="price"
        inputMode="decimal"
        required
        value={value.price}
        onValue={(v) => onValue({ ...value, price: v })}
        error={error}
      />
      <TextField
        label="Currency"
        name="currency"
        required
        maxLength={3}
        hint="ISO 4217 code, such as USD or EUR."
        value={value.currency}
        onValue={(v) => onValue({ ...value, currency: v })}
        error={error}
      />
    </div>
  );
}

/** What kind of product it is, one time or recurring, the card partner's price and a free trial. */
export function BillingFields({ value, onValue, error }: Fields) {
  return (
    <fieldset>
      <legend>Billing</legend>
      <div class="row">
        <SelectField
          label="Product type"
          name="productType"
          value={value.productType}
          options={optionsOf(PRODUCT_TYPES, words)}
          onValue={(v) => onValue({ ...value, productType: v })}
          error={error}
        />
        <SelectField
          label="Billing"
          name="billingType"
          value={value.billingType}
          options={optionsOf(BILLING_TYPES, words)}
          onValue={(v) => onValue({ ...value, billingType: v })}
          error={error}
        />
        <SelectField
          label="Interval"
          name="interval"
          value={value.interval}
          options={[
            { value: '', label: 'None (one time)' },
            { value: 'month', label: 'Every month' },
            { value: 'year', label: 'Every year' },
          ]}
          onValue={(v) => onValue({ ...value, interval: v })}
          error={error}
        />
      </div>
      <TextField
        label="Card partner price id (recurring)"
        name="partnerPriceIdRecurring"
        hint="Needed before recurring products can be bought by card."
        value={value.partnerPriceIdRecurring}
        onValue={(v) => onValue({ ...value, partnerPriceIdRecurring: v })}
        error={error}
      />
      <TextField
        label="Free trial (days)"
        name="trialDays"
        inputMode="numeric"
        hint="1 to 365 days, offered on the checkout page; empty for no trial. License and subscription products."
        value={value.trialDays}
        onValue={(v) => onValue({ ...value, trialDays: v })}
        error={error}
      />
    </fieldset>
  );
}
