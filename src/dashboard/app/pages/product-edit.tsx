import { useEffect, useState } from 'preact/hooks';
import { api } from '../api';
import { CopyButton, SecretValue } from '../components/copy';
import { DeliveryLogs } from '../components/delivery-log';
import { useConfirm } from '../components/dialog';
import {
  ActionButton,
  Checkbox,
  Form,
  FormError,
  namedOptions,
  optionsOf,
  SelectField,
  Submit,
  TextArea,
  TextField,
} from '../components/form';
import { Facts, Loading, Page, Section, StatusBadge } from '../components/page';
import { useAnnounce } from '../components/status';
import { useAction, useLoad } from '../components/use-api';
import { formatDateTime, plural, words } from '../format';
import { href, navigate } from '../router';
import { useSession } from '../session-context';
import { type App, BILLING_TYPES, type OffsetPage, PRODUCT_TYPES, type Product } from '../types';

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
type UrlField = (typeof URL_FIELDS)[number][0];

const FLAGS = [
  ['partnerTaxEnabled', 'Collect tax at the card partner', null],
  ['partnerIdentityRequired', 'Require the buyer’s identity at the card partner', null],
  ['cryptoPaymentsEnabled', 'Accept crypto payments', 'business'],
  ['hideEmail', 'Hide the buyer’s e-mail field', 'enterprise'],
  ['autoRedirect', 'Send buyers straight to the success URL', 'enterprise'],
  ['sendLicenseToCustomer', 'E-mail the license to the buyer', 'enterprise'],
] as const;
type Flag = (typeof FLAGS)[number][0];

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
type PortalField = (typeof PORTAL_FIELDS)[number][0];
const PORTAL_DEFAULTS: Record<PortalField, number> = {
  portalLicenseFileDays: 30,
  portalDeviceReleases: 3,
  portalReleasePeriodDays: 30,
};

/** The license policy as the form holds it: the model, and its numbers as typed. */
interface PolicyDraft {
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

/** A recurring product's licenses follow the subscription: no validity is sent for one. */
function policyBody(policy: PolicyDraft, recurring: boolean): Product['licensePolicy'] {
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

interface Draft {
  appId: string;
  name: string;
  description: string;
  price: string;
  currency: string;
  active: boolean;
  productType: string;
  billingType: string;
  interval: string;
  partnerPriceIdRecurring: string;
  trialDays: string;
  licenseEmails: string;
  urls: Record<UrlField, string>;
  flags: Record<Flag, boolean>;
  portal: Record<PortalField, string>;
  licensePolicy: PolicyDraft;
}

function draftOf(product: Product | null, appId: string): Draft {
  return {
    appId: product?.appId ?? appId,
    name: product?.name ?? '',
    description: product?.description ?? '',
    price: product ? String(product.price) : '',
    currency: product?.currency ?? 'USD',
    active: product?.active ?? true,
    productType: product?.productType ?? 'license',
    billingType: product?.billingType ?? 'one_time',
    interval: product?.interval ?? '',
    partnerPriceIdRecurring: product?.partnerPriceIdRecurring ?? '',
    trialDays: product?.trialDays == null ? '' : String(product.trialDays),
    licenseEmails: product?.licenseEmails.join(', ') ?? '',
    urls: Object.fromEntries(URL_FIELDS.map(([field]) => [field, product?.[field] ?? ''])) as Record<
      UrlField,
      string
    >,
    flags: Object.fromEntries(FLAGS.map(([flag]) => [flag, product?.[flag] ?? false])) as Record<
      Flag,
      boolean
    >,
    portal: Object.fromEntries(
      PORTAL_FIELDS.map(([field]) => [field, String(product?.[field] ?? PORTAL_DEFAULTS[field])]),
    ) as Record<PortalField, string>,
    licensePolicy: {
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
    },
  };
}

/** The draft as the API's product fields; empty optional text becomes null. */
function bodyOf(draft: Draft): Record<string, unknown> {
  const price = draft.price.trim() === '' ? null : Number(draft.price);
  return {
    appId: draft.appId,
    name: draft.name,
    description: draft.description,
    price,
    currency: draft.currency.trim(),
    productType: draft.productType,
    billingType: draft.billingType,
    interval: draft.interval || null,
    partnerPriceIdRecurring: draft.partnerPriceIdRecurring.trim() || null,
    // Sent as typed: a value that is not 1 to 365 comes back as the API's error on the field.
    trialDays: draft.trialDays.trim() === '' ? null : Number(draft.trialDays),
    licensePolicy: policyBody(draft.licensePolicy, draft.billingType === 'recurring'),
    licenseEmails: draft.licenseEmails
      .split(/[\s,;]+/)
      .map((email) => email.trim())
      .filter(Boolean),
    ...Object.fromEntries(URL_FIELDS.map(([field]) => [field, draft.urls[field].trim() || null])),
    ...draft.flags,
    // Empty is sent as null, so the API names the field rather than reading it as 0.
    ...Object.fromEntries(
      PORTAL_FIELDS.map(([field]) => [
        field,
        draft.portal[field].trim() === '' ? null : Number(draft.portal[field]),
      ]),
    ),
  };
}

/** Only what differs from the product as read, so a PATCH never touches a field left alone. */
function changesOf(body: Record<string, unknown>, product: Product): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(body).filter(
      ([field, value]) => JSON.stringify(value) !== JSON.stringify(product[field as keyof Product]),
    ),
  );
}

export function ProductEditPage({ id }: { id?: string }) {
  const loaded = useLoad(async () => {
    const [product, apps] = await Promise.all([
      id ? api.get<Product>(`/products/${id}`) : null,
      api.get<OffsetPage<'apps', App>>('/apps', { limit: 100 }),
    ]);
    return { product, apps: apps.apps };
  }, id ?? 'new');
  const name = loaded.data?.product?.name;
  return (
    <Page title={id ? `Product: ${name ?? ''}` : 'New product'}>
      <p>
        <a href={href('/products')}>Back to products</a>
      </p>
      <Loading state={loaded}>
        {({ product, apps }) =>
          apps.length === 0 ? (
            <p>
              A product sells licenses of one of your apps. <a href={href('/apps')}>Create an app</a> first.
            </p>
          ) : (
            <>
              {product && <ProductTools product={product} onChanged={loaded.reload} />}
              <ProductForm product={product} apps={apps} onSaved={loaded.reload} />
              {product && <MerchantDeliveries product={product} />}
            </>
          )
        }
      </Loading>
    </Page>
  );
}

/** The checkout's merchant webhook deliveries of this product (payment and subscription events). */
function MerchantDeliveries({ product }: { product: Product }) {
  const [version, setVersion] = useState(0);
  return (
    <DeliveryLogs
      base={`/products/${product.id}/merchant-webhook`}
      title="Merchant webhook deliveries"
      empty={
        product.merchantWebhookUrl
          ? 'Nothing delivered yet: payment and subscription events of this product will show here.'
          : 'Set a merchant webhook URL to receive this product’s payment and subscription events.'
      }
      version={version}
      onSent={() => setVersion((v) => v + 1)}
    />
  );
}

function ProductForm({ product, apps, onSaved }: { product: Product | null; apps: App[]; onSaved(): void }) {
  const { user } = useSession();
  const [draft, setDraft] = useState(() => draftOf(product, apps[0]?.id ?? ''));
  useEffect(() => setDraft(draftOf(product, apps[0]?.id ?? '')), [product, apps]);
  const save = useAction();
  const announce = useAnnounce();
  const set = <K extends keyof Draft>(field: K, value: Draft[K]) =>
    setDraft((d) => ({ ...d, [field]: value }));

  const submit = () =>
    save.run(async () => {
      const body = bodyOf(draft);
      if (!product) {
        const created = await api.post<Product>('/products', { ...body, active: draft.active });
        announce(`Product ${created.name} created`);
        navigate(`/products/${created.id}`);
        return;
      }
      const changes = changesOf(body, product);
      if (Object.keys(changes).length === 0) {
        announce('Nothing to save: no field changed');
        return;
      }
      await api.patch<Product>(`/products/${product.id}`, changes);
      announce('Product saved');
      onSaved();
    });

  const error = save.error;
  return (
    <Section title={product ? 'Details' : 'Describe the product'}>
      <Form label={product ? 'Product details' : 'New product'} onSubmit={submit}>
        <fieldset>
          <legend>What you sell</legend>
          <TextField
            label="Product name"
            name="name"
            required
            value={draft.name}
            onValue={(v) => set('name', v)}
            error={error}
          />
          <SelectField
            label="App"
            name="appId"
            hint="Licenses bought through this product are issued for this app."
            value={draft.appId}
            options={namedOptions(apps)}
            onValue={(v) => set('appId', v)}
            error={error}
          />
          <TextArea
            label="Description"
            name="description"
            value={draft.description}
            onValue={(v) => set('description', v)}
            error={error}
          />
          <div class="row">
            <TextField
              label="Price"
              name="price"
              inputMode="decimal"
              required
              value={draft.price}
              onValue={(v) => set('price', v)}
              error={error}
            />
            <TextField
              label="Currency"
              name="currency"
              required
              maxLength={3}
              hint="ISO 4217 code, such as USD or EUR."
              value={draft.currency}
              onValue={(v) => set('currency', v)}
              error={error}
            />
          </div>
          {!product && (
            <Checkbox
              label="Active (can be bought)"
              name="active"
              checked={draft.active}
              onChecked={(v) => set('active', v)}
              error={error}
            />
          )}
        </fieldset>
        <fieldset>
          <legend>Billing</legend>
          <div class="row">
            <SelectField
              label="Product type"
              name="productType"
              value={draft.productType}
              options={optionsOf(PRODUCT_TYPES, words)}
              onValue={(v) => set('productType', v)}
              error={error}
            />
            <SelectField
              label="Billing"
              name="billingType"
              value={draft.billingType}
              options={optionsOf(BILLING_TYPES, words)}
              onValue={(v) => set('billingType', v)}
              error={error}
            />
            <SelectField
              label="Interval"
              name="interval"
              value={draft.interval}
              options={[
                { value: '', label: 'None (one time)' },
                { value: 'month', label: 'Every month' },
                { value: 'year', label: 'Every year' },
              ]}
              onValue={(v) => set('interval', v)}
              error={error}
            />
          </div>
          <TextField
            label="Card partner price id (recurring)"
            name="partnerPriceIdRecurring"
            hint="Needed before recurring products can be bought by card."
            value={draft.partnerPriceIdRecurring}
            onValue={(v) => set('partnerPriceIdRecurring', v)}
            error={error}
          />
          <TextField
            label="Free trial (days)"
            name="trialDays"
            inputMode="numeric"
            hint="1 to 365 days, offered on the checkout page; empty for no trial. License and subscription products."
            value={draft.trialDays}
            onValue={(v) => set('trialDays', v)}
            error={error}
          />
        </fieldset>
        <fieldset>
          <legend>Licenses sold</legend>
          <SelectField
            label="Devices"
            name="licensePolicy.model"
            value={draft.licensePolicy.model}
            options={POLICY_MODELS}
            onValue={(v) =>
              set('licensePolicy', { ...draft.licensePolicy, model: v as PolicyDraft['model'] })
            }
            error={error}
          />
          {draft.licensePolicy.model === 'node_locked' && (
            <TextField
              label="Devices per license"
              name="licensePolicy.maxDevices"
              inputMode="numeric"
              hint="1 to 100000 machines a license may be activated on."
              value={draft.licensePolicy.maxDevices}
              onValue={(v) => set('licensePolicy', { ...draft.licensePolicy, maxDevices: v })}
              error={error}
            />
          )}
          {draft.licensePolicy.model === 'floating' && (
            <div class="row">
              <TextField
                label="Seats per license"
                name="licensePolicy.maxSeats"
                inputMode="numeric"
                hint="Devices that may run at the same time."
                value={draft.licensePolicy.maxSeats}
                onValue={(v) => set('licensePolicy', { ...draft.licensePolicy, maxSeats: v })}
                error={error}
              />
              <TextField
                label="Seat lapses after (seconds)"
                name="licensePolicy.leaseSeconds"
                inputMode="numeric"
                hint="60 to 86400 without a heartbeat; empty: 600."
                value={draft.licensePolicy.leaseSeconds}
                onValue={(v) => set('licensePolicy', { ...draft.licensePolicy, leaseSeconds: v })}
                error={error}
              />
            </div>
          )}
          {draft.billingType !== 'recurring' && (
            <TextField
              label="License valid for (days)"
              name="licensePolicy.validityDays"
              inputMode="numeric"
              hint="Empty: the license never expires."
              value={draft.licensePolicy.validityDays}
              onValue={(v) => set('licensePolicy', { ...draft.licensePolicy, validityDays: v })}
              error={error}
            />
          )}
          <div class="row">
            <TextField
              label="Must go online every (days)"
              name="licensePolicy.checkInDays"
              inputMode="numeric"
              hint="1 to 3650; empty: never required."
              value={draft.licensePolicy.checkInDays}
              onValue={(v) => set('licensePolicy', { ...draft.licensePolicy, checkInDays: v })}
              error={error}
            />
            {draft.licensePolicy.checkInDays.trim() !== '' && (
              <TextField
                label="Grace (days)"
                name="licensePolicy.graceDays"
                inputMode="numeric"
                hint="0 to 365 days past a missed check-in."
                value={draft.licensePolicy.graceDays}
                onValue={(v) => set('licensePolicy', { ...draft.licensePolicy, graceDays: v })}
                error={error}
              />
            )}
          </div>
          <SelectField
            label="When a license ends"
            name="licensePolicy.expiryStrategy"
            value={draft.licensePolicy.expiryStrategy}
            options={EXPIRY_STRATEGIES}
            onValue={(v) =>
              set('licensePolicy', {
                ...draft.licensePolicy,
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
              value={draft.licensePolicy.maxUses}
              onValue={(v) => set('licensePolicy', { ...draft.licensePolicy, maxUses: v })}
              error={error}
            />
            {draft.licensePolicy.maxUses.trim() !== '' && (
              <SelectField
                label="Count starts again"
                name="licensePolicy.usesResetInterval"
                value={draft.licensePolicy.usesResetInterval}
                options={RESET_INTERVALS}
                onValue={(v) =>
                  set('licensePolicy', {
                    ...draft.licensePolicy,
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
                ...policyBody(draft.licensePolicy, draft.billingType === 'recurring'),
                leaseSeconds: numberOrNull(draft.licensePolicy.leaseSeconds),
              },
              draft.billingType === 'recurring',
            )}
          </p>
        </fieldset>
        <fieldset>
          <legend>Checkout links</legend>
          {URL_FIELDS.map(([field, label, hint]) => (
            <TextField
              key={field}
              label={label}
              name={field}
              type="url"
              hint={hint || undefined}
              value={draft.urls[field]}
              onValue={(v) => set('urls', { ...draft.urls, [field]: v })}
              error={error}
            />
          ))}
        </fieldset>
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
              checked={draft.flags[flag]}
              onChecked={(v) => set('flags', { ...draft.flags, [flag]: v })}
              error={error}
            />
          ))}
          <TextArea
            label="Send copies of issued licenses to"
            name="licenseEmails"
            hint="E-mail addresses separated by commas. Enterprise tier."
            rows={2}
            value={draft.licenseEmails}
            onValue={(v) => set('licenseEmails', v)}
            error={error}
          />
        </fieldset>
        <fieldset>
          <legend>Buyer portal</legend>
          {PORTAL_FIELDS.map(([field, label, hint]) => (
            <TextField
              key={field}
              label={label}
              name={field}
              inputMode="numeric"
              hint={hint}
              value={draft.portal[field]}
              onValue={(v) => set('portal', { ...draft.portal, [field]: v })}
              error={error}
            />
          ))}
        </fieldset>
        <Submit action={save}>{product ? 'Save product' : 'Create product'}</Submit>
      </Form>
    </Section>
  );
}

/** What a seller does with a product beyond its fields: link, secret, availability, deletion. */
function ProductTools({ product, onChanged }: { product: Product; onChanged(): void }) {
  const action = useAction();
  const announce = useAnnounce();
  const [confirm, confirmDialog] = useConfirm();

  const setActive = (active: boolean) =>
    action.run(async () => {
      await api.patch<Product>(`/products/${product.id}`, { active });
      announce(
        active
          ? 'Product activated: it can be bought again'
          : 'Product deactivated: it can no longer be bought',
      );
      onChanged();
    });
  const rotate = async () => {
    const yes = await confirm({
      title: 'Rotate the callback secret?',
      message:
        'A new secret is generated and the current one stops working at once. Update your servers right after.',
      action: 'Rotate secret',
      danger: true,
    });
    if (!yes) return;
    if (await action.run(() => api.post<Product>(`/products/${product.id}/rotate-callback-secret`))) {
      announce('Callback secret rotated');
      onChanged();
    }
  };
  const remove = async () => {
    const yes = await confirm({
      title: `Delete “${product.name}”?`,
      message:
        'Only a product no license, order or subscription refers to can be deleted; otherwise deactivate it.',
      action: 'Delete product',
      danger: true,
    });
    if (yes && (await action.run(() => api.delete(`/products/${product.id}`)))) {
      announce(`Product ${product.name} deleted`);
      navigate('/products');
    }
  };

  return (
    <Section title="Selling">
      <Facts
        facts={{
          State: (
            <>
              <StatusBadge status={product.active ? 'active' : 'inactive'} />{' '}
              <ActionButton action={action} onClick={() => setActive(!product.active)}>
                {product.active ? 'Deactivate' : 'Activate'}
              </ActionButton>
            </>
          ),
          'Checkout link': (
            <>
              <a href={product.checkoutUrl} rel="noreferrer" target="_blank">
                {product.checkoutUrl}
              </a>{' '}
              <CopyButton text={product.checkoutUrl} label="Copy checkout link" what="Checkout link" />
            </>
          ),
          'Callback secret': (
            <>
              <SecretValue value={product.callbackSecret} what="Callback secret" />{' '}
              <ActionButton action={action} kind="danger" onClick={rotate}>
                Rotate secret
              </ActionButton>
              <span class="hint">Signs redirects and merchant webhooks. Keep it on your servers.</span>
            </>
          ),
          Updated: formatDateTime(product.updatedAt),
        }}
      />
      <FormError error={action.error} />
      <ActionButton action={action} kind="danger" onClick={remove}>
        Delete product
      </ActionButton>
      {confirmDialog}
    </Section>
  );
}
