import { useState } from 'preact/hooks';
import { api } from '../api';
import { CopyButton } from '../components/copy';
import { Dialog } from '../components/dialog';
import { EventsField } from '../components/events-field';
import { Form, FormError, SelectField, TextField } from '../components/form';
import { Loading, Page, StatusBadge } from '../components/page';
import { useAnnounce } from '../components/status';
import { useAction, useLoad } from '../components/use-api';
import { formatDateTime } from '../format';
import { href, navigate } from '../router';
import type { App, OffsetPage, Webhook, WebhookWithSecret } from '../types';

interface WebhookPage {
  webhooks: Webhook[];
  total: number;
  page: number;
  limit: number;
}

export function WebhooksPage() {
  const [pageNumber, setPageNumber] = useState(1);
  const webhooks = useLoad(() => api.get<WebhookPage>('/webhooks', { page: pageNumber }), String(pageNumber));
  const apps = useLoad(() => api.get<OffsetPage<'apps', App>>('/apps', { limit: 100 }), 'apps');
  const appList = apps.data?.apps ?? [];
  return (
    <Page title="Webhooks">
      <p class="muted">
        Your server hears about licenses, apps and sign-ups as they happen, signed with the webhook’s secret.
      </p>
      <Loading state={webhooks}>
        {(page) =>
          page.webhooks.length === 0 ? (
            <p>No webhooks yet.</p>
          ) : (
            <>
              <table>
                <caption class="visually-hidden">Webhooks</caption>
                <thead>
                  <tr>
                    <th scope="col">URL</th>
                    <th scope="col">Events</th>
                    <th scope="col">App</th>
                    <th scope="col">State</th>
                    <th scope="col">Last success</th>
                  </tr>
                </thead>
                <tbody>
                  {page.webhooks.map((webhook) => (
                    <tr key={webhook.id}>
                      <th scope="row">
                        <a href={href(`/webhooks/${webhook.id}`)}>{webhook.url}</a>
                      </th>
                      <td>{webhook.events.join(', ')}</td>
                      <td>
                        {webhook.appId
                          ? (appList.find((a) => a.id === webhook.appId)?.name ?? '')
                          : 'All apps'}
                      </td>
                      <td>
                        <StatusBadge status={webhook.status} />
                      </td>
                      <td>{formatDateTime(webhook.lastSuccessAt)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
              {page.total > page.limit && (
                <nav class="pager" aria-label="Webhooks pages">
                  <button
                    type="button"
                    class="secondary"
                    disabled={page.page <= 1}
                    onClick={() => setPageNumber(page.page - 1)}
                  >
                    Previous
                  </button>
                  <span>
                    Page {page.page} of {Math.ceil(page.total / page.limit)}
                  </span>
                  <button
                    type="button"
                    class="secondary"
                    disabled={page.page * page.limit >= page.total}
                    onClick={() => setPageNumber(page.page + 1)}
                  >
                    Next
                  </button>
                </nav>
              )}
            </>
          )
        }
      </Loading>
      <CreateWebhook apps={appList} />
    </Page>
  );
}

function CreateWebhook({ apps }: { apps: App[] }) {
  const [url, setUrl] = useState('');
  const [events, setEvents] = useState<string[]>(['license.created']);
  const [appId, setAppId] = useState('');
  const [created, setCreated] = useState<WebhookWithSecret | null>(null);
  const action = useAction();
  const announce = useAnnounce();
  const submit = () =>
    action.run(async () => {
      const webhook = await api.post<WebhookWithSecret>('/webhooks', {
        url,
        events,
        ...(appId ? { appId } : {}),
      });
      announce('Webhook created');
      setCreated(webhook);
    });
  // Once the secret is put away, on to the new webhook's page (its test and delivery log).
  const finish = () => {
    const id = created?.id;
    setCreated(null);
    if (id) navigate(`/webhooks/${id}`);
  };
  return (
    <section aria-labelledby="create-webhook">
      <h2 id="create-webhook">Add a webhook</h2>
      <Form label="Add a webhook" onSubmit={submit}>
        <TextField
          label="Endpoint URL"
          name="url"
          type="url"
          required
          value={url}
          onValue={setUrl}
          error={action.error}
        />
        <EventsField events={events} onEvents={setEvents} error={action.error} />
        <SelectField
          label="App"
          name="appId"
          hint="Events of one app only, or of all your apps."
          value={appId}
          options={[{ value: '', label: 'All apps' }, ...apps.map((a) => ({ value: a.id, label: a.name }))]}
          onValue={setAppId}
          error={action.error}
        />
        <FormError error={action.error} />
        <button type="submit" class="primary" disabled={action.busy}>
          Add webhook
        </button>
      </Form>
      <Dialog open={created !== null} title="Webhook signing secret" onClose={finish}>
        {created && (
          <>
            <p>
              <strong>Copy the secret now: you will not see it again.</strong> Your endpoint checks the
              X-Webhook-Signature header with it.
            </p>
            <div class="field">
              <label for="new-webhook-secret">Signing secret</label>
              <input id="new-webhook-secret" readOnly value={created.secret} class="mono" />
            </div>
            <div class="actions">
              <CopyButton text={created.secret} label="Copy secret" what="Signing secret" />
              <button type="button" class="primary" onClick={finish}>
                Done
              </button>
            </div>
          </>
        )}
      </Dialog>
    </section>
  );
}
