import type { ApiError } from '../api';
import { TextField } from '../components/form';
import type { Product } from '../types';

/** What buyers may do in the portal: whole numbers, sent as typed so the API names a bad one. */
const PORTAL_FIELDS = [
  [
    'portalLicenseFileDays',
    'License file validity (days)',
    '1 to 3650. Files buyers download for computers without internet.',
  ],
  [
    'portalDeviceReleases',
    'Device releases per period',
    '0 to 1000 per license; 0: only you release devices.',
  ],
  [
    'portalReleasePeriodDays',
    'Release period (days)',
    '1 to 365: the rolling window releases are counted over.',
  ],
] as const;
export type PortalField = (typeof PORTAL_FIELDS)[number][0];
const PORTAL_DEFAULTS: Record<PortalField, number> = {
  portalLicenseFileDays: 30,
  portalDeviceReleases: 3,
  portalReleasePeriodDays: 30,
};

/** The portal settings as the form holds them, as typed; a new product's are the defaults. */
export function portalDraftOf(product: Product | null): Record<PortalField, string> {
  return Object.fromEntries(
    PORTAL_FIELDS.map(([field]) => [field, String(product?.[field] ?? PORTAL_DEFAULTS[field])]),
  ) as Record<PortalField, string>;
}

/** The portal settings as the API's product fields. */
export function portalBody(portal: Record<PortalField, string>): Record<string, unknown> {
  // Empty is sent as null, so the API names the field rather than reading it as 0.
  return Object.fromEntries(
    PORTAL_FIELDS.map(([field]) => [field, portal[field].trim() === '' ? null : Number(portal[field])]),
  );
}

/** What buyers of the product may do in the portal themselves. */
export function PortalFields({
  value,
  onValue,
  error,
}: {
  value: Record<PortalField, string>;
  onValue(value: Record<PortalField, string>): void;
  error: ApiError | null;
}) {
  return (
    <fieldset>
      <legend>Buyer portal</legend>
      {PORTAL_FIELDS.map(([field, label, hint]) => (
        <TextField
          key={field}
          label={label}
          name={field}
          inputMode="numeric"
          hint={hint}
          value={value[field]}
          onValue={(v) => onValue({ ...value, [field]: v })}
          error={error}
        />
      ))}
    </fieldset>
  );
}
