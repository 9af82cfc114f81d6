import { useEffect, useState } from 'preact/hooks';
import { api } from '../api';
import { SecretOnce, useConfirm } from '../components/dialog';
import { ActionButton, Form, FormError, SelectField, TextArea, TextField } from '../components/form';
import { ListTable, Pager, useOffsetList } from '../components/list';
import { Loading, Page, Section } from '../components/page';
import { useAnnounce } from '../components/status';
import { useAction, useLoad } from '../components/use-api';
import { formatDateTime } from '../format';
import { href, navigate } from '../router';
import type { ApiKey, App, CreatedApiKey, OffsetPage } from '../types';

export function AppDetailPage({ appId }: { appId: string }) {
  const app = useLoad(() => api.get<App>(`/apps/${appId}`), appId);
  return (
    <Page title={app.data ? `App: ${app.data.name}` : 'App'}>
      <Loading state={app}>
        {(loaded) => (
          <>
            <p>
              <a href={href(`/apps/${appId}/licenses`)}>Licenses of this app</a> ·{' '}
              <a href={href(`/apps/${appId}/releases`)}>Releases</a> ·{' '}
              <a href={href('/webhooks')}>Webhooks</a> · <a href={href('/products')}>Products</a>
            </p>
            <ApiKeys appId={appId} />
            <EditApp app={loaded} onSaved={app.reload} />
          </>
        )}
      </Loading>
    </Page>
  );
}

function ApiKeys({ appId }: { appId: string }) {
  const keys = useOffsetList<OffsetPage<'apiKeys', ApiKey>>(`/apps/${appId}/api-keys`);
  const [name, setName] = useState('');
  const [created, setCreated] = useState<CreatedApiKey | null>(null);
  const create = useAction();
  const revoke = useAction();
  const announce = useAnnounce();
  const [confirm, confirmDialog] = useConfirm();

  const submit = () =>
    create.run(async () => {
      setCreated(await api.post<CreatedApiKey>(`/apps/${appId}/api-keys`, { name }));
      setName('');
      keys.reload();
    });
  const revokeKey = async (key: ApiKey) => {
    const yes = await confirm({
      title: `Revoke the key “${key.name}”?`,
      message: 'Backends using this key stop working at once. This cannot be undone.',
      action: 'Revoke key',
      danger: true,
    });
    if (!yes) return;
    if (await revoke.run(() => api.delete(`/apps/${appId}/api-keys/${key.id}`))) {
      announce(`Key ${key.name} revoked`);
      keys.reload();
    }
  };

  return (
    <Section title="API keys">
      <p class="muted">A key lets your backend call the API for this app. Keep keys on your servers.</p>
      <Loading state={keys}>
        {(page) => (
          <ListTable
            caption="API keys"
            rows={page.apiKeys}
            empty={<p>No API keys yet.</p>}
            columns={[
              { title: 'Name', cell: (key) => key.name },
              { title: 'Key starts with', card: 'figure', cell: (key) => <code>{key.prefix}…</code> },
              { title: 'Created', cell: (key) => formatDateTime(key.createdAt) },
              {
                title: 'Last used',
                cell: (key) => (key.lastUsedAt ? formatDateTime(key.lastUsedAt) : 'Never'),
              },
              {
                title: 'State',
                cell: (key) => (key.revokedAt ? `Revoked ${formatDateTime(key.revokedAt)}` : 'Active'),
              },
            ]}
            actions={(key) =>
              !key.revokedAt && (
                <button type="button" class="danger" onClick={() => revokeKey(key)}>
                  Revoke <span class="visually-hidden">key {key.name}</span>
                </button>
              )
            }
            pager={<Pager label="API keys" page={page} onOffset={keys.setOffset} />}
          />
        )}
      </Loading>
      <FormError error={revoke.error} />
      <Form label="Create an API key" onSubmit={submit} class="form inline">
        <TextField
          label="Key name"
          name="name"
          required
          value={name}
          onValue={setName}
          error={create.error}
          hint="For example: production backend."
        />
        <button type="submit" class="primary" disabled={create.busy}>
          Create API key
        </button>
        <FormError error={create.error} />
      </Form>
      <SecretOnce
        secret={created?.key ?? null}
        title="Your new API key"
        warning="Copy this key now: you will not see it again."
        note="Only its first characters are kept for the list."
        label={`API key “${created?.name}”`}
        what="API key"
        copyLabel="Copy key"
        onDone={() => setCreated(null)}
      />
      {confirmDialog}
    </Section>
  );
}

/** What a license's timeline keeps of the address a client called from (docs/licenses.md). */
const CLIENT_ADDRESSES = [
  { value: 'truncated', label: 'Its network only (203.0.113.0/24)' },
  { value: 'full', label: 'The whole address' },
  { value: 'none', label: 'Nothing' },
] as const;

function EditApp({ app, onSaved }: { app: App; onSaved(): void }) {
  const [name, setName] = useState(app.name);
  const [description, setDescription] = useState(app.description);
  const [clientAddresses, setClientAddresses] = useState<string>(app.clientAddresses);
  useEffect(() => {
    setName(app.name);
    setDescription(app.description);
    setClientAddresses(app.clientAddresses);
  }, [app]);
  const save = useAction();
  const remove = useAction();
  const announce = useAnnounce();
  const [confirm, confirmDialog] = useConfirm();
  const submit = () =>
    save.run(async () => {
      await api.patch<App>(`/apps/${app.id}`, { name, description, clientAddresses });
      announce('App saved');
      onSaved();
    });
  const deleteApp = async () => {
    const yes = await confirm({
      title: `Delete the app “${app.name}”?`,
      message: 'Its API keys stop working. An app that still has products or licenses cannot be deleted.',
      action: 'Delete app',
      danger: true,
    });
    if (yes && (await remove.run(() => api.delete(`/apps/${app.id}`)))) {
      announce(`App ${app.name} deleted`);
      navigate('/apps');
    }
  };
  return (
    <Section title="Settings">
      <Form label="App settings" onSubmit={submit}>
        <TextField label="App name" name="name" required value={name} onValue={setName} error={save.error} />
        <TextArea
          label="Description"
          name="description"
          value={description}
          onValue={setDescription}
          error={save.error}
        />
        <SelectField
          label="Client addresses in license timelines"
          name="clientAddresses"
          hint="What each license’s history keeps of the address a client called from."
          value={clientAddresses}
          options={CLIENT_ADDRESSES}
          onValue={setClientAddresses}
          error={save.error}
        />
        <FormError error={save.error} />
        <div class="actions">
          <button type="submit" class="primary" disabled={save.busy}>
            Save app
          </button>
          <ActionButton action={remove} kind="danger" onClick={deleteApp}>
            Delete app
          </ActionButton>
        </div>
      </Form>
      <FormError error={remove.error} />
      {confirmDialog}
    </Section>
  );
}
