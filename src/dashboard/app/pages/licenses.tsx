import { useEffect, useState } from 'preact/hooks';
import { ApiError, api } from '../api';
import { CopyButton } from '../components/copy';
import {
  Form,
  namedOptions,
  SearchForm,
  SelectField,
  StatusSelect,
  Submit,
  TextArea,
  TextField,
} from '../components/form';
import { ListTable, Pager, ResultCount, useOffsetList } from '../components/list';
import { Loading, Page, Section, StatusBadge } from '../components/page';
import { useAnnounce } from '../components/status';
import { useAction, useLoad } from '../components/use-api';
import { endOfDayUtc, formatDate } from '../format';
import { href, navigate } from '../router';
import { type App, LICENSE_STATUSES, type License, type OffsetPage, type Product } from '../types';

type Search = {
  key: string;
  email: string;
  status: string;
  productId: string;
};
const NO_SEARCH: Search = { key: '', email: '', status: '', productId: '' };

/** Licenses belong to an app: without one in the path, the first app's licenses are shown. */
export function LicensesPage({ appId }: { appId?: string }) {
  const apps = useLoad(() => api.get<OffsetPage<'apps', App>>('/apps', { limit: 100 }), 'apps');
  const first = apps.data?.apps[0];
  useEffect(() => {
    if (!appId && first) location.replace(href(`/apps/${first.id}/licenses`));
  }, [appId, first]);
  const app = apps.data?.apps.find((candidate) => candidate.id === appId);
  return (
    <Page title={app ? `Licenses: ${app.name}` : 'Licenses'}>
      <Loading state={apps}>
        {(page) =>
          page.apps.length === 0 ? (
            <p>
              Licenses are issued for an app. <a href={href('/apps')}>Create an app</a> first.
            </p>
          ) : appId ? (
            <>
              <div class="filters">
                <SelectField
                  label="App"
                  name="app"
                  value={appId}
                  options={namedOptions(page.apps)}
                  onValue={(id) => navigate(`/apps/${id}/licenses`)}
                />
              </div>
              <AppLicenses appId={appId} />
            </>
          ) : (
            <p class="muted">Loading…</p>
          )
        }
      </Loading>
    </Page>
  );
}

function AppLicenses({ appId }: { appId: string }) {
  const products = useLoad(
    () => api.get<OffsetPage<'products', Product>>('/products', { appId, limit: 100 }),
    appId,
  );
  const productList = products.data?.products ?? [];
  const productName = (id: string | null) => (id ? (productList.find((p) => p.id === id)?.name ?? '') : '—');
  const [draft, setDraft] = useState<Search>(NO_SEARCH);
  const licenses = useOffsetList<OffsetPage<'licenses', License>, Search>(
    `/apps/${appId}/licenses`,
    NO_SEARCH,
  );
  const searching = Object.values(licenses.filter).some(Boolean);

  return (
    <>
      <Section title="Find licenses">
        <SearchForm
          label="Search licenses"
          onSearch={() => licenses.filterBy({ ...draft, key: draft.key.trim(), email: draft.email.trim() })}
          onClear={() => {
            setDraft(NO_SEARCH);
            licenses.filterBy(NO_SEARCH);
          }}
        >
          <TextField
            label="License key"
            name="key"
            value={draft.key}
            onValue={(key) => setDraft({ ...draft, key })}
          />
          <TextField
            label="Buyer e-mail"
            name="email"
            type="email"
            value={draft.email}
            onValue={(email) => setDraft({ ...draft, email })}
          />
          <StatusSelect
            statuses={LICENSE_STATUSES}
            value={draft.status}
            onValue={(status) => setDraft({ ...draft, status })}
          />
          <SelectField
            label="Product"
            name="productId"
            value={draft.productId}
            options={[{ value: '', label: 'Any product' }, ...namedOptions(productList)]}
            onValue={(productId) => setDraft({ ...draft, productId })}
          />
        </SearchForm>
        <Loading state={licenses}>
          {(page) => (
            <>
              <ResultCount
                total={page.total}
                noun={['license', 'licenses']}
                searching={searching}
                none={searching ? 'No license matches this search.' : 'No licenses yet.'}
              />
              <ListTable
                caption="Licenses"
                rows={page.licenses}
                columns={[
                  {
                    title: 'Key',
                    cell: (license) => (
                      <a class="mono" href={href(`/apps/${appId}/licenses/${license.id}`)}>
                        {license.key}
                      </a>
                    ),
                  },
                  { title: 'E-mail', cell: (license) => license.email ?? '—' },
                  { title: 'Status', cell: (license) => <StatusBadge status={license.status} /> },
                  { title: 'Product', cell: (license) => productName(license.productId) },
                  {
                    title: 'Expires',
                    cell: (license) => (license.expiresAt ? formatDate(license.expiresAt) : 'Never'),
                  },
                  {
                    title: 'Devices',
                    cell: (license) => (
                      <>
                        {license.deviceCount}
                        {license.maxDevices !== null ? ` of ${license.maxDevices}` : ''}
                      </>
                    ),
                  },
                ]}
              />
              <Pager label="Licenses" page={page} onOffset={licenses.setOffset} />
            </>
          )}
        </Loading>
      </Section>
      <IssueLicense appId={appId} products={productList} onIssued={licenses.reload} />
    </>
  );
}

function IssueLicense({
  appId,
  products,
  onIssued,
}: {
  appId: string;
  products: Product[];
  onIssued(): void;
}) {
  const [email, setEmail] = useState('');
  const [productId, setProductId] = useState('');
  const [expires, setExpires] = useState('');
  const [maxDevices, setMaxDevices] = useState('');
  const [plan, setPlan] = useState('');
  const [features, setFeatures] = useState('');
  const [extra, setExtra] = useState('');
  const [issued, setIssued] = useState<License | null>(null);
  const action = useAction();
  const announce = useAnnounce();

  const submit = () =>
    action.run(async () => {
      const metadata = parseMetadata(extra);
      if (plan.trim()) metadata.plan = plan.trim();
      const featureList = features
        .split(',')
        .map((f) => f.trim())
        .filter(Boolean);
      if (featureList.length > 0) metadata.features = featureList;
      const license = await api.post<License>(`/apps/${appId}/licenses`, {
        ...(email.trim() ? { email: email.trim() } : {}),
        ...(productId ? { productId } : {}),
        ...(expires ? { expiresAt: endOfDayUtc(expires) } : {}),
        ...(maxDevices.trim() ? { maxDevices: Number(maxDevices) } : {}),
        ...(Object.keys(metadata).length > 0 ? { metadata } : {}),
      });
      setIssued(license);
      for (const clear of [setEmail, setExpires, setMaxDevices, setPlan, setFeatures, setExtra]) clear('');
      announce(`License issued: ${license.key}`);
      onIssued();
    });

  return (
    <Section title="Issue a license">
      <Form label="Issue a license" onSubmit={submit}>
        <div class="row">
          <TextField
            label="Buyer e-mail"
            name="email"
            type="email"
            value={email}
            onValue={setEmail}
            error={action.error}
          />
          <SelectField
            label="Product"
            name="productId"
            value={productId}
            options={[{ value: '', label: 'No product' }, ...namedOptions(products)]}
            onValue={setProductId}
            error={action.error}
          />
        </div>
        <LicenseLimits
          expires={expires}
          onExpires={setExpires}
          expiresHint="Works until the end of this day (UTC). Empty: never expires."
          maxDevices={maxDevices}
          onMaxDevices={setMaxDevices}
          error={action.error}
        />
        <div class="row">
          <TextField
            label="Plan"
            name="metadata.plan"
            hint="Travels in license tokens."
            value={plan}
            onValue={setPlan}
            error={action.error}
          />
          <TextField
            label="Features"
            name="metadata.features"
            hint="Separated by commas."
            value={features}
            onValue={setFeatures}
            error={action.error}
          />
        </div>
        <TextArea
          label="Other metadata (JSON object)"
          name="metadata"
          rows={2}
          value={extra}
          onValue={setExtra}
        />
        <Submit action={action}>Issue license</Submit>
      </Form>
      {issued && (
        <section class="notice" aria-label="Issued license">
          <p>
            Issued license <code class="mono">{issued.key}</code>{' '}
            <CopyButton text={issued.key} label="Copy license key" what="License key" />{' '}
            <a href={href(`/apps/${appId}/licenses/${issued.id}`)}>Open the license</a>
          </p>
        </section>
      )}
    </Section>
  );
}

/** How long and on how many devices a license works: set when it is issued, changed later. */
export function LicenseLimits({
  expires,
  onExpires,
  expiresHint,
  maxDevices,
  onMaxDevices,
  error,
}: {
  /** A date input's value. */
  expires: string;
  onExpires(value: string): void;
  expiresHint: string;
  maxDevices: string;
  onMaxDevices(value: string): void;
  error: ApiError | null;
}) {
  return (
    <div class="row">
      <TextField
        label="Expires on"
        name="expiresAt"
        type="date"
        hint={expiresHint}
        value={expires}
        onValue={onExpires}
        error={error}
      />
      <TextField
        label="Maximum devices"
        name="maxDevices"
        type="number"
        min={1}
        hint="Empty: no limit."
        value={maxDevices}
        onValue={onMaxDevices}
        error={error}
      />
    </div>
  );
}

/** The free-form part of the metadata, typed as JSON; refused here with the field named. */
function parseMetadata(text: string): Record<string, unknown> {
  if (!text.trim()) return {};
  let value: unknown = null;
  try {
    value = JSON.parse(text);
  } catch {
    // Reported below like any other value that is not an object.
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ApiError(0, 'validation_failed', 'Other metadata must be a JSON object, such as {"seats": 5}', [
      { field: 'metadata', message: 'must be a JSON object' },
    ]);
  }
  return value as Record<string, unknown>;
}
