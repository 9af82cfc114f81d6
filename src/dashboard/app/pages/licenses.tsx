import { useEffect, useState } from 'preact/hooks';
import { ApiError, api } from '../api';
import { CopyButton, ShortKey } from '../components/copy';
import { useConfirm } from '../components/dialog';
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
import { ExportLink, ListTable, Pager, ResultCount, useUrlList } from '../components/list';
import { Loading, Page, Section, StatusBadge } from '../components/page';
import { useAnnounce } from '../components/status';
import { useAction, useLoad } from '../components/use-api';
import { endOfDayUtc, formatDate, formatDateTime } from '../format';
import { href, withQuery } from '../router';
import { type App, LICENSE_STATUSES, type License, type OffsetPage, type Product } from '../types';

/** The list's filters and sort, as the URL's query and the API's name them. */
const FIELDS = ['appId', 'key', 'email', 'status', 'productId', 'sort'] as const;
type Field = (typeof FIELDS)[number];
type Search = Record<Field, string>;

/** Newest first, as the API lists them. */
const DEFAULT_SORT = '-createdAt';

/**
 * The seller's licenses across all their apps, newest first. Filters and sort live in the URL
 * (#/licenses?appId=…&email=…&sort=…). The old per-app path leads here with its app as a filter.
 */
export function LicensesPage({ appId }: { appId?: string }) {
  useEffect(() => {
    if (appId) location.replace(href(withQuery('/licenses', { appId })));
  }, [appId]);
  const apps = useLoad(() => api.get<OffsetPage<'apps', App>>('/apps', { limit: 100 }), 'apps');
  return (
    <Page title="Licenses">
      <Loading state={apps}>
        {(page) =>
          page.apps.length === 0 ? (
            <p>
              Licenses are issued for an app. <a href={href('/apps')}>Create an app</a> first.
            </p>
          ) : appId ? (
            <p class="muted">Loading…</p>
          ) : (
            <AllLicenses apps={page.apps} />
          )
        }
      </Loading>
    </Page>
  );
}

function AllLicenses({ apps }: { apps: App[] }) {
  const products = useLoad(
    () => api.get<OffsetPage<'products', Product>>('/products', { limit: 100 }),
    'products',
  );
  const productList = products.data?.products ?? [];
  const productName = (id: string | null) => (id ? (productList.find((p) => p.id === id)?.name ?? '') : '—');
  const appName = (id: string) => apps.find((app) => app.id === id)?.name ?? '';
  const licenses = useUrlList<OffsetPage<'licenses', License>, Field>('/licenses', FIELDS);
  const filterKey = JSON.stringify(licenses.filter);
  const [draft, setDraft] = useState<Search>(licenses.filter);
  // The back button (or a link) changes the filter under the form: the form follows.
  useEffect(() => setDraft(licenses.filter), [filterKey]);
  const { sort: _sort, ...filters } = licenses.filter;
  const searching = Object.values(filters).some(Boolean);
  const appProducts = draft.appId
    ? productList.filter((p) => !p.appId || p.appId === draft.appId)
    : productList;

  return (
    <>
      <Section title="Find licenses">
        <SearchForm
          label="Search licenses"
          onSearch={() => licenses.filterBy({ ...draft, key: draft.key.trim(), email: draft.email.trim() })}
          onClear={() => licenses.filterBy({ appId: '', key: '', email: '', status: '', productId: '' })}
        >
          {apps.length > 1 && (
            <SelectField
              label="App"
              name="appId"
              value={draft.appId}
              options={[{ value: '', label: 'All apps' }, ...namedOptions(apps)]}
              onValue={(appId) => setDraft({ ...draft, appId, productId: '' })}
            />
          )}
          <TextField
            label="License key"
            name="key"
            value={draft.key}
            onValue={(key) => setDraft({ ...draft, key })}
          />
          <TextField
            label="Buyer e-mail"
            name="email"
            hint="Any part of the address."
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
            options={[{ value: '', label: 'Any product' }, ...namedOptions(appProducts)]}
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
              {page.total > 0 && (
                <ExportLink path="/licenses/export.csv" query={licenses.apiQuery} filename="licenses.csv" />
              )}
              <ListTable
                caption="Licenses"
                rows={page.licenses}
                busy={licenses.loading}
                sorting={{
                  sort: licenses.filter.sort || DEFAULT_SORT,
                  onSort: (sort) => licenses.filterBy({ sort }),
                }}
                columns={[
                  {
                    title: 'Key',
                    cell: (license) => (
                      <span class="key-cell">
                        <a
                          class="mono"
                          href={href(`/apps/${license.appId}/licenses/${license.id}`)}
                          aria-label={license.key}
                        >
                          <ShortKey value={license.key} />
                        </a>
                        <CopyButton
                          text={license.key}
                          label="Copy"
                          name={`Copy license key ${license.key}`}
                          what="License key"
                        />
                      </span>
                    ),
                  },
                  {
                    title: 'E-mail',
                    sort: 'email',
                    cell: (license) => (license.email ? <span class="break">{license.email}</span> : '—'),
                  },
                  {
                    title: 'Status',
                    sort: 'status',
                    card: 'status',
                    cell: (license) => <StatusBadge status={license.status} />,
                  },
                  ...(apps.length > 1
                    ? [{ title: 'App', cell: (license: License) => appName(license.appId) }]
                    : []),
                  { title: 'Product', cell: (license) => productName(license.productId) },
                  { title: 'Created', sort: '-createdAt', cell: (license) => formatDate(license.createdAt) },
                  {
                    title: 'Last verified',
                    sort: '-lastVerifiedAt',
                    cell: (license) =>
                      license.lastVerifiedAt ? formatDateTime(license.lastVerifiedAt) : 'Never',
                  },
                  {
                    title: 'Expires',
                    sort: 'expiresAt',
                    card: 'figure',
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
      <IssueLicense
        apps={apps}
        appId={licenses.filter.appId || (apps[0]?.id ?? '')}
        products={productList}
        onIssued={licenses.reload}
      />
    </>
  );
}

function IssueLicense({
  apps,
  appId: initialApp,
  products: allProducts,
  onIssued,
}: {
  apps: App[];
  appId: string;
  products: Product[];
  onIssued(): void;
}) {
  const [appId, setAppId] = useState(initialApp);
  useEffect(() => setAppId(initialApp), [initialApp]);
  const products = allProducts.filter((product) => !product.appId || product.appId === appId);
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
  const [confirm, confirmDialog] = useConfirm();
  const nothingFilled = [email, productId, expires, maxDevices, plan, features, extra].every(
    (value) => !value.trim(),
  );

  // A license with nothing set works for anyone with its key, everywhere, for ever: one press of
  // Enter on an untouched form should not make one.
  const submit = async () => {
    if (
      nothingFilled &&
      !(await confirm({
        title: 'Issue a license with nothing filled in?',
        message:
          'It will have no buyer e-mail, no product, no expiry and no device limit: anyone with its key can use it on any number of devices, for ever. You can set the e-mail, expiry and device limit later.',
        action: 'Issue license',
      }))
    )
      return;
    await issue();
  };

  const issue = () =>
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
      {confirmDialog}
      <Form label="Issue a license" onSubmit={() => void submit()}>
        {apps.length > 1 && (
          <SelectField
            label="App"
            name="appId"
            value={appId}
            options={namedOptions(apps)}
            onValue={(next) => {
              setAppId(next);
              setProductId('');
            }}
            required
          />
        )}
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
