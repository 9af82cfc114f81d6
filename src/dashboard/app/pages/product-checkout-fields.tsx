import type { ApiError } from '../api';
import { Checkbox, TextArea, TextField } from '../components/form';
import { useSession } from '../session-context';
import type { Product } from '../types';

const URL_FIELDS = [
  ['successUrl', 'Success URL', 'Where buyers go after paying.'],
  ['cancelUrl', 'Cancel URL', 'Where buyers go when they cancel.'],
  ['helpUrl', 'Help URL', ''],
  ['supportUrl', 'Support URL', ''],
  ['termsUrl', 'Terms URL', ''],
  ['privacyUrl', 'Privacy URL', ''],
  ['refundUrl', 'Refund policy URL', ''],
  [
    'merchantWebhookUrl',
    'Merchant webhook URL',
    'Where the checkout host posts this product’s payment events.',
  ],
] as const;
export type UrlField = (typeof URL_FIELDS)[number][0];

const FLAGS = [
  ['partnerTaxEnabled', 'Collect tax at the card partner', null],
  ['partnerIdentityRequired', 'Require the buyer’s identity at the card partner', null],
  ['cryptoPaymentsEnabled', 'Accept crypto payments', 'business'],
  ['hideEmail', 'Hide the buyer’s e-mail field', 'enterprise'],
  ['autoRedirect', 'Send buyers straight to the success URL', 'enterprise'],
  ['sendLicenseToCustomer', 'E-mail the license to the buyer', 'enterprise'],
] as const;
export type Flag = (typeof FLAGS)[number][0];

/** The checkout's links as the form holds them, as typed. */
export function urlsDraftOf(product: Product | null): Record<UrlField, string> {
  return Object.fromEntries(URL_FIELDS.map(([field]) => [field, product?.[field] ?? ''])) as Record<
    UrlField,
    string
  >;
}

/** The checkout's options as the form holds them; a new product's are all off. */
export function flagsDraftOf(product: Product | null): Record<Flag, boolean> {
  return Object.fromEntries(FLAGS.map(([flag]) => [flag, product?.[flag] ?? false])) as Record<Flag, boolean>;
}

/** The links as the API's product fields; an empty one becomes null. */
export function urlsBody(urls: Record<UrlField, string>): Record<string, unknown> {
  return Object.fromEntries(URL_FIELDS.map(([field]) => [field, urls[field].trim() || null]));
}

/** Where the checkout sends buyers, and where it posts the product's payment events. */
export function CheckoutLinkFields({
  value,
  onValue,
  error,
}: {
  value: Record<UrlField, string>;
  onValue(value: Record<UrlField, string>): void;
  error: ApiError | null;
}) {
  return (
    <fieldset>
      <legend>Checkout links</legend>
      {URL_FIELDS.map(([field, label, hint]) => (
        <TextField
          key={field}
          label={label}
          name={field}
          type="url"
          hint={hint || undefined}
          value={value[field]}
          onValue={(v) => onValue({ ...value, [field]: v })}
          error={error}
        />
      ))}
    </fieldset>
  );
}

/** What the checkout asks and does, each option with the tier it needs, and who gets license copies. */
export function CheckoutOptionFields({
  flags,
  onFlags,
  licenseEmails,
  onLicenseEmails,
  error,
}: {
  flags: Record<Flag, boolean>;
  onFlags(flags: Record<Flag, boolean>): void;
  licenseEmails: string;
  onLicenseEmails(licenseEmails: string): void;
  error: ApiError | null;
}) {
  const { user } = useSession();
  return (
    <fieldset>
      <legend>Checkout options</legend>
      {FLAGS.map(([flag, label, tier]) => (
        <Checkbox
          key={flag}
          label={label}
          name={flag}
          hint={
            tier
              ? `${tier[0]?.toUpperCase()}${tier.slice(1)} tier and above (you are on ${user.tier}).`
              : undefined
          }
          checked={flags[flag]}
          onChecked={(v) => onFlags({ ...flags, [flag]: v })}
          error={error}
        />
      ))}
      <TextArea
        label="Send copies of issued licenses to"
        name="licenseEmails"
        hint="E-mail addresses separated by commas. Enterprise tier."
        rows={2}
        value={licenseEmails}
        onValue={onLicenseEmails}
        error={error}
      />
    </fieldset>
  );
}
