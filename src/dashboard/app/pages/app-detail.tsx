import { useEffect, useState } from 'preact/hooks';
import { api } from '../api';
import { CopyButton } from '../components/copy';
import { Dialog, useConfirm } from '../components/dialog';
import { Form, FormError, TextArea, TextField } from '../components/form';
import { Loading, Page, Pager } from '../components/page';
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
  const [offset, setOffset] = useState(0);
  const keys = useLoad(
    () => api.get<OffsetPage<'apiKeys', ApiKey>>(`/apps/${appId}/api-keys`, { offset }),
    `${appId}:${offset}`,
  );
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
    <section aria-labelledby="api-keys">
      <h2 id="api-keys">API keys</h2>
      <p class="muted">A key lets your backend call the API for this app. Keep keys on your servers.</p>
      <Loading state={keys}>
        {(page) =>
          page.apiKeys.length === 0 ? (
            <p>No API keys yet.</p>
          ) : (
            <>
              <table>
                <caption class="visually-hidden">API keys</caption>
                <thead>
                  <tr>
                    <th scope="col">Name</th>
                    <th scope="col">Key starts with</th>
                    <th scope="col">Created</th>
                    <th scope="col">Last used</th>
                    <th scope="col">State</th>
                    <th scope="col">
                      <span class="visually-hidden">Actions</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {page.apiKeys.map((key) => (
                    <tr key={key.id}>
                      <th scope="row">{key.name}</th>
                      <td>
                        <code>{key.prefix}…</code>
                      </td>
                      <td>{formatDateTime(key.createdAt)}</td>
                      <td>{key.lastUsedAt ? formatDateTime(key.lastUsedAt) : 'Never'}</td>
                      <td>{key.revokedAt ? `Revoked ${formatDateTime(key.revokedAt)}` : 'Active'}</td>
                      <td>
                        {!key.revokedAt && (
                          <button type="button" class="danger" onClick={() => revokeKey(key)}>
                            Revoke <span class="visually-hidden">key {key.name}</span>
                          </button>
                        )}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
              <Pager
                label="API keys"
                total={page.total}
                limit={page.limit}
                offset={page.offset}
                onOffset={setOffset}
              />
            </>
          )
        }
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
      <Dialog open={created !== null} title="Your new API key" onClose={() => setCreated(null)}>
        {created && (
          <>
            <p>
              <strong>Copy this key now: you will not see it again.</strong> Only its first characters are
              kept for the list.
            </p>
            <div class="field">
              <label for="new-api-key">API key “{created.name}”</label>
              <input id="new-api-key" readOnly value={created.key} class="mono" />
            </div>
            <div class="actions">
              <CopyButton text={created.key} label="Copy key" what="API key" />
              <button type="button" class="primary" onClick={() => setCreated(null)}>
                Done
              </button>
            </div>
          </>
        )}
      </Dialog>
      {confirmDialog}
    </section>
  );
}

function EditApp({ app, onSaved }: { app: App; onSaved(): void }) {
  const [name, setName] = useState(app.name);
  const [description, setDescription] = useState(app.description);
  useEffect(() => {
    setName(app.name);
    setDescription(app.description);
  }, [app]);
  const save = useAction();
  const remove = useAction();
  const announce = useAnnounce();
  const [confirm, confirmDialog] = useConfirm();
  const submit = () =>
    save.run(async () => {
      await api.patch<App>(`/apps/${app.id}`, { name, description });
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
    <section aria-labelledby="app-settings">
      <h2 id="app-settings">Settings</h2>
      <Form label="App settings" onSubmit={submit}>
        <TextField label="App name" name="name" required value={name} onValue={setName} error={save.error} />
        <TextArea
          label="Description"
          name="description"
          value={description}
          onValue={setDescription}
          error={save.error}
        />
        <FormError error={save.error} />
        <div class="actions">
          <button type="submit" class="primary" disabled={save.busy}>
            Save app
          </button>
          <button type="button" class="danger" onClick={deleteApp} disabled={remove.busy}>
            Delete app
          </button>
        </div>
      </Form>
      <FormError error={remove.error} />
      {confirmDialog}
    </section>
  );
}
