import type { ApiError } from '../api';
import { SelectField, TextField } from '../components/form';
import { plural } from '../format';
import type { Product } from '../types';

/** The license policy as the form holds it: the model, and its numbers as typed. */
export interface PolicyDraft {
  model: Product['licensePolicy']['model'];
  maxDevices: string;
  maxSeats: string;
  leaseSeconds: string;
  validityDays: string;
  checkInDays: string;
  graceDays: string;
  expiryStrategy: Product['licensePolicy']['expiryStrategy'];
  maxUses: string;
  usesResetInterval: NonNullable<Product['licensePolicy']['usesResetInterval']>;
}
const EXPIRY_STRATEGIES = [
  { value: 'restrict', label: 'Stops working' },
  { value: 'maintain_access', label: 'Keeps working as it was (no new devices)' },
];
const RESET_INTERVALS = [
  { value: 'never', label: 'Never' },
  { value: 'day', label: 'Every day (UTC)' },
  { value: 'month', label: 'Every month (UTC)' },
  { value: 'renewal', label: 'At each renewal' },
];
const POLICY_MODELS = [
  { value: 'unlimited', label: 'No device limit' },
  { value: 'node_locked', label: 'Locked to a number of devices' },
  { value: 'floating', label: 'Floating seats (devices at once)' },
];
const typed = (value: number | null) => (value === null ? '' : String(value));
/** Empty is sent as null, so the API names a missing number rather than reading it as 0. */
const numberOrNull = (value: string) => (value.trim() === '' ? null : Number(value));

/** The product's policy as the form starts from it; a new product's: any device, for ever. */
export function policyDraftOf(product: Product | null): PolicyDraft {
  return {
    model: product?.licensePolicy.model ?? 'unlimited',
    maxDevices: typed(product?.licensePolicy.maxDevices ?? null),
    maxSeats: typed(product?.licensePolicy.maxSeats ?? null),
    leaseSeconds: typed(product?.licensePolicy.leaseSeconds ?? null),
    validityDays: typed(product?.licensePolicy.validityDays ?? null),
    checkInDays: typed(product?.licensePolicy.checkInDays ?? null),
    graceDays: typed(product?.licensePolicy.graceDays ?? null),
    expiryStrategy: product?.licensePolicy.expiryStrategy ?? 'restrict',
    maxUses: typed(product?.licensePolicy.maxUses ?? null),
    usesResetInterval: product?.licensePolicy.usesResetInterval ?? 'never',
  };
}

/** A recurring product's licenses follow the subscription: no validity is sent for one. */
export function policyBody(policy: PolicyDraft, recurring: boolean): Product['licensePolicy'] {
  return {
    model: policy.model,
    maxDevices: policy.model === 'node_locked' ? numberOrNull(policy.maxDevices) : null,
    maxSeats: policy.model === 'floating' ? numberOrNull(policy.maxSeats) : null,
    leaseSeconds: policy.model === 'floating' ? numberOrNull(policy.leaseSeconds) : null,
    validityDays: recurring ? null : numberOrNull(policy.validityDays),
    checkInDays: numberOrNull(policy.checkInDays),
    graceDays: numberOrNull(policy.checkInDays) === null ? null : (numberOrNull(policy.graceDays) ?? 0),
    expiryStrategy: policy.expiryStrategy,
    maxUses: numberOrNull(policy.maxUses),
    usesResetInterval: numberOrNull(policy.maxUses) === null ? null : policy.usesResetInterval,
  };
}

/** The policy in plain words, as the buyer's license will follow it. */
export function policyInWords(policy: Product['licensePolicy'], recurring: boolean): string {
  const use =
    policy.model === 'node_locked' && policy.maxDevices
      ? `works on up to ${plural(policy.maxDevices, 'device', 'devices')}`
      : policy.model === 'floating' && policy.maxSeats
        ? `runs on ${plural(policy.maxSeats, 'device', 'devices')} at a time; a seat lapses after ${plural(
            Math.round((policy.leaseSeconds ?? 600) / 60),
            'minute',
            'minutes',
          )} without a heartbeat`
        : 'works on any number of devices';
  const length = recurring
    ? 'for as long as the subscription is paid'
    : policy.validityDays
      ? `for ${plural(policy.validityDays, 'day', 'days')}`
      : 'for ever';
  const terms = [
    policy.checkInDays
      ? `it must go online every ${plural(policy.checkInDays, 'day', 'days')}${
          policy.graceDays ? ` (${plural(policy.graceDays, 'day', 'days')} of grace)` : ''
        }`
      : null,
    policy.expiryStrategy === 'maintain_access' && (recurring || policy.validityDays)
      ? 'once it ends it keeps working as it was'
      : null,
    policy.maxUses
      ? `${plural(policy.maxUses, 'use', 'uses')}${
          policy.usesResetInterval === 'day'
            ? ' a day'
            : policy.usesResetInterval === 'month'
              ? ' a month'
              : policy.usesResetInterval === 'renewal'
                ? ' per renewal'
                : ' in all'
        }`
      : null,
  ].filter((term) => term !== null);
  return `Each license sold ${use}, ${length}${terms.length ? `; ${terms.join('; ')}` : ''}.`;
}

/**
 * What each license sold is allowed: devices or seats, validity, check-ins, what happens when
 * it ends and a usage quota; only the fields the model and billing use are shown.
 */
export function LicensePolicyFields({
  value,
  recurring,
  onValue,
  error,
}: {
  value: PolicyDraft;
  recurring: boolean;
  onValue(value: PolicyDraft): void;
  error: ApiError | null;
}) {
  return (
    <fieldset>
      <legend>Licenses sold</legend>
      <SelectField
        label="Devices"
        name="licensePolicy.model"
        value={value.model}
        options={POLICY_MODELS}
        onValue={(v) => onValue({ ...value, model: v as PolicyDraft['model'] })}
        error={error}
      />
      {value.model === 'node_locked' && (
        <TextField
          label="Devices per license"
          name="licensePolicy.maxDevices"
          inputMode="numeric"
          hint="1 to 100000 machines a license may be activated on."
          value={value.maxDevices}
          onValue={(v) => onValue({ ...value, maxDevices: v })}
          error={error}
        />
      )}
      {value.model === 'floating' && (
        <div class="row">
          <TextField
            label="Seats per license"
            name="licensePolicy.maxSeats"
            inputMode="numeric"
            hint="Devices that may run at the same time."
            value={value.maxSeats}
            onValue={(v) => onValue({ ...value, maxSeats: v })}
            error={error}
          />
          <TextField
            label="Seat lapses after (seconds)"
            name="licensePolicy.leaseSeconds"
            inputMode="numeric"
            hint="60 to 86400 without a heartbeat; empty: 600."
            value={value.leaseSeconds}
            onValue={(v) => onValue({ ...value, leaseSeconds: v })}
            error={error}
          />
        </div>
      )}
      {!recurring && (
        <TextField
          label="License valid for (days)"
          name="licensePolicy.validityDays"
          inputMode="numeric"
          hint="Empty: the license never expires."
          value={value.validityDays}
          onValue={(v) => onValue({ ...value, validityDays: v })}
          error={error}
        />
      )}
      <div class="row">
        <TextField
          label="Must go online every (days)"
          name="licensePolicy.checkInDays"
          inputMode="numeric"
          hint="1 to 3650; empty: never required."
          value={value.checkInDays}
          onValue={(v) => onValue({ ...value, checkInDays: v })}
          error={error}
        />
        {value.checkInDays.trim() !== '' && (
          <TextField
            label="Grace (days)"
            name="licensePolicy.graceDays"
            inputMode="numeric"
            hint="0 to 365 days past a missed check-in."
            value={value.graceDays}
            onValue={(v) => onValue({ ...value, graceDays: v })}
            error={error}
          />
        )}
      </div>
      <SelectField
        label="When a license ends"
        name="licensePolicy.expiryStrategy"
        value={value.expiryStrategy}
        options={EXPIRY_STRATEGIES}
        onValue={(v) =>
          onValue({
            ...value,
            expiryStrategy: v as PolicyDraft['expiryStrategy'],
          })
        }
        error={error}
      />
      <div class="row">
        <TextField
          label="Uses per license"
          name="licensePolicy.maxUses"
          inputMode="numeric"
          hint="What POST /v1/licenses/usage may consume; empty: no quota."
          value={value.maxUses}
          onValue={(v) => onValue({ ...value, maxUses: v })}
          error={error}
        />
        {value.maxUses.trim() !== '' && (
          <SelectField
            label="Count starts again"
            name="licensePolicy.usesResetInterval"
            value={value.usesResetInterval}
            options={RESET_INTERVALS}
            onValue={(v) =>
              onValue({
                ...value,
                usesResetInterval: v as PolicyDraft['usesResetInterval'],
              })
            }
            error={error}
          />
        )}
      </div>
      <p class="hint" id="policy-in-words">
        {policyInWords(
          {
            ...policyBody(value, recurring),
            leaseSeconds: numberOrNull(value.leaseSeconds),
          },
          recurring,
        )}
      </p>
    </fieldset>
  );
}
