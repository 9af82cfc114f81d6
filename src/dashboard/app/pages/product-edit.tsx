import { useEffect, useState } from 'preact/hooks';
import { api } from '../api';
import { DeliveryLogs } from '../components/delivery-log';
import { Checkbox, Form, namedOptions, SelectField, Submit, TextArea, TextField } from '../components/form';
import { Loading, Page, Section } from '../components/page';
import { useAnnounce } from '../components/status';
import { useAction, useLoad } from '../components/use-api';
import { href, navigate } from '../router';
import type { App, OffsetPage, Product } from '../types';
import {
  CheckoutLinkFields,
  CheckoutOptionFields,
  type Flag,
  flagsDraftOf,
  type UrlField,
  urlsBody,
  urlsDraftOf,
} from './product-checkout-fields';
import { LicensePolicyFields, type PolicyDraft, policyBody, policyDraftOf } from './product-policy-fields';
import { type PortalField, PortalFields, portalBody, portalDraftOf } from './product-portal-fields';
import { BillingFields, type PriceDraft, PriceFields, priceBody, priceDraftOf } from './product-price-fields';
import { ProductTools } from './product-tools';

/** The product as the form holds it; each group of fields keeps its own part (product-*-fields). */
interface Draft {
  appId: string;
  name: string;
  description: string;
  pricing: PriceDraft;
  active: boolean;
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
    pricing: priceDraftOf(product),
    active: product?.active ?? true,
    licenseEmails: product?.licenseEmails.join(', ') ?? '',
    urls: urlsDraftOf(product),
    flags: flagsDraftOf(product),
    portal: portalDraftOf(product),
    licensePolicy: policyDraftOf(product),
  };
}

/** The draft as the API's product fields; empty optional text becomes null. */
function bodyOf(draft: Draft): Record<string, unknown> {
  return {
    appId: draft.appId,
    name: draft.name,
    description: draft.description,
    ...priceBody(draft.pricing),
    licensePolicy: policyBody(draft.licensePolicy, draft.pricing.billingType === 'recurring'),
    licenseEmails: draft.licenseEmails
      .split(/[\s,;]+/)
      .map((email) => email.trim())
      .filter(Boolean),
    ...urlsBody(draft.urls),
    ...draft.flags,
    ...portalBody(draft.portal),
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
          <PriceFields value={draft.pricing} onValue={(v) => set('pricing', v)} error={error} />
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
        <BillingFields value={draft.pricing} onValue={(v) => set('pricing', v)} error={error} />
        <LicensePolicyFields
          value={draft.licensePolicy}
          recurring={draft.pricing.billingType === 'recurring'}
          onValue={(v) => set('licensePolicy', v)}
          error={error}
        />
        <CheckoutLinkFields value={draft.urls} onValue={(v) => set('urls', v)} error={error} />
        <CheckoutOptionFields
          flags={draft.flags}
          onFlags={(v) => set('flags', v)}
          licenseEmails={draft.licenseEmails}
          onLicenseEmails={(v) => set('licenseEmails', v)}
          error={error}
        />
        <PortalFields value={draft.portal} onValue={(v) => set('portal', v)} error={error} />
        <Submit action={save}>{product ? 'Save product' : 'Create product'}</Submit>
      </Form>
    </Section>
  );
}
