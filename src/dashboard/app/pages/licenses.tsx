import { useEffect, useState } from 'preact/hooks';
import { ApiError, api } from '../api';
import { CopyButton } from '../components/copy';
import { Form, FormError, SelectField, TextArea, TextField } from '../components/form';
import { Loading, Page, Pager, StatusBadge } from '../components/page';
import { useAnnounce } from '../components/status';
import { useAction, useLoad } from '../components/use-api';
import { endOfDayUtc, formatDate } from '../format';
import { href, navigate } from '../router';
import { type App, LICENSE_STATUSES, type License, type OffsetPage, type Product } from '../types';

interface Search {
  key: string;
  email: string;
  status: string;
  productId: string;
}
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
                  options={page.apps.map((a) => ({ value: a.id, label: a.name }))}
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
  const [search, setSearch] = useState<Search>(NO_SEARCH);
  const [offset, setOffset] = useState(0);
  const licenses = useLoad(
    () => api.get<OffsetPage<'licenses', License>>(`/apps/${appId}/licenses`, { ...search, offset }),
    JSON.stringify([appId, search, offset]),
  );
  const productOptions = [
    { value: '', label: 'Any product' },
    ...productList.map((p) => ({ value: p.id, label: p.name })),
  ];
  const searching = Object.values(search).some(Boolean);

  return (
    <>
      <section aria-labelledby="find-licenses">
        <h2 id="find-licenses">Find licenses</h2>
        <search>
          <Form
            label="Search licenses"
            class="form filters"
            onSubmit={() => {
              setSearch({ ...draft, key: draft.key.trim(), email: draft.email.trim() });
              setOffset(0);
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
            <SelectField
              label="Status"
              name="status"
              value={draft.status}
              options={[
                { value: '', label: 'Any status' },
                ...LICENSE_STATUSES.map((s) => ({ value: s, label: s })),
              ]}
              onValue={(status) => setDraft({ ...draft, status })}
            />
            <SelectField
              label="Product"
              name="productId"
              value={draft.productId}
              options={productOptions}
              onValue={(productId) => setDraft({ ...draft, productId })}
            />
            <div class="actions">
              <button type="submit" class="primary">
                Search
              </button>
              <button
                type="button"
                class="secondary"
                onClick={() => {
                  setDraft(NO_SEARCH);
                  setSearch(NO_SEARCH);
                  setOffset(0);
                }}
              >
                Clear search
              </button>
            </div>
          </Form>
        </search>
        <Loading state={licenses}>
          {(page) => (
            <>
              <p aria-live="polite">
                {page.total === 0
                  ? searching
                    ? 'No license matches this search.'
                    : 'No licenses yet.'
                  : `${page.total} ${page.total === 1 ? 'license' : 'licenses'}${searching ? ' found' : ''}.`}
              </p>
              {page.licenses.length > 0 && (
                <table>
                  <caption class="visually-hidden">Licenses</caption>
                  <thead>
                    <tr>
                      <th scope="col">Key</th>
                      <th scope="col">E-mail</th>
                      <th scope="col">Status</th>
                      <th scope="col">Product</th>
                      <th scope="col">Expires</th>
                      <th scope="col">Devices</th>
                    </tr>
                  </thead>
                  <tbody>
                    {page.licenses.map((license) => (
                      <tr key={license.id}>
                        <th scope="row">
                          <a class="mono" href={href(`/apps/${appId}/licenses/${license.id}`)}>
                            {license.key}
                          </a>
                        </th>
                        <td>{license.email ?? '—'}</td>
                        <td>
                          <StatusBadge status={license.status} />
                        </td>
                        <td>{productName(license.productId)}</td>
                        <td>{license.expiresAt ? formatDate(license.expiresAt) : 'Never'}</td>
                        <td>
                          {license.deviceCount}
                          {license.maxDevices !== null ? ` of ${license.maxDevices}` : ''}
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              )}
              <Pager
                label="Licenses"
                total={page.total}
                limit={page.limit}
                offset={page.offset}
                onOffset={setOffset}
              />
            </>
          )}
        </Loading>
      </section>
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
    <section aria-labelledby="issue-license">
      <h2 id="issue-license">Issue a license</h2>
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
            options={[
              { value: '', label: 'No product' },
              ...products.map((p) => ({ value: p.id, label: p.name })),
            ]}
            onValue={setProductId}
            error={action.error}
          />
        </div>
        <div class="row">
          <TextField
            label="Expires on"
            name="expiresAt"
            type="date"
            hint="Works until the end of this day (UTC). Empty: never expires."
            value={expires}
            onValue={setExpires}
            error={action.error}
          />
          <TextField
            label="Maximum devices"
            name="maxDevices"
            type="number"
            min={1}
            hint="Empty: no limit."
            value={maxDevices}
            onValue={setMaxDevices}
            error={action.error}
          />
        </div>
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
        <FormError error={action.error} />
        <button type="submit" class="primary" disabled={action.busy}>
          Issue license
        </button>
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
    </section>
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
