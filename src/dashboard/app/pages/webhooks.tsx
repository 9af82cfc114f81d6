import { useState } from 'preact/hooks';
import { api } from '../api';
import { EmptyState, useCreatePanel } from '../components/create-panel';
import { SecretOnce } from '../components/dialog';
import { Form, namedOptions, SelectField, Submit } from '../components/form';
import { ListTable, NumberedPager } from '../components/list';
import { Loading, Page, Section, StatusBadge } from '../components/page';
import { useAnnounce } from '../components/status';
import { useAction, useLoad } from '../components/use-api';
import { type Endpoint, EndpointFields } from '../components/webhook-fields';
import { formatDateTime } from '../format';
import { href, navigate } from '../router';
import type { App, NumberedPage, OffsetPage, Webhook, WebhookWithSecret } from '../types';

export function WebhooksPage() {
  const [pageNumber, setPageNumber] = useState(1);
  const webhooks = useLoad(
    () => api.get<NumberedPage<'webhooks', Webhook>>('/webhooks', { page: pageNumber }),
    String(pageNumber),
  );
  const apps = useLoad(() => api.get<OffsetPage<'apps', App>>('/apps', { limit: 100 }), 'apps');
  const appList = apps.data?.apps ?? [];
  const create = useCreatePanel('New webhook');
  return (
    <Page title="Webhooks" actions={create.button}>
      <p class="muted">
        Your server hears about licenses, apps and sign-ups as they happen, signed with the webhook’s secret.
      </p>
      {create.panel(<CreateWebhook apps={appList} />)}
      <Loading state={webhooks}>
        {(page) => (
          <ListTable
            caption="Webhooks"
            rows={page.webhooks}
            empty={
              !create.open && (
                <EmptyState
                  title="No webhooks yet"
                  action={
                    <button type="button" class="primary" onClick={create.show}>
                      Add your first webhook
                    </button>
                  }
                >
                  Add a webhook so your server hears when a license is created, changed or revoked, instead of
                  asking for it.
                </EmptyState>
              )
            }
            columns={[
              {
                title: 'URL',
                cell: (webhook) => <a href={href(`/webhooks/${webhook.id}`)}>{webhook.url}</a>,
              },
              { title: 'Events', cell: (webhook) => webhook.events.join(', ') },
              {
                title: 'App',
                cell: (webhook) =>
                  webhook.appId ? (appList.find((a) => a.id === webhook.appId)?.name ?? '') : 'All apps',
              },
              { title: 'State', card: 'status', cell: (webhook) => <StatusBadge status={webhook.status} /> },
              { title: 'Last success', cell: (webhook) => formatDateTime(webhook.lastSuccessAt) },
            ]}
            pager={<NumberedPager label="Webhooks" page={page} onPage={setPageNumber} />}
          />
        )}
      </Loading>
    </Page>
  );
}

function CreateWebhook({ apps }: { apps: App[] }) {
  const [endpoint, setEndpoint] = useState<Endpoint>({ url: '', events: ['license.created'] });
  const [appId, setAppId] = useState('');
  const [created, setCreated] = useState<WebhookWithSecret | null>(null);
  const action = useAction();
  const announce = useAnnounce();
  const submit = () =>
    action.run(async () => {
      const webhook = await api.post<WebhookWithSecret>('/webhooks', {
        ...endpoint,
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
    <Section title="Add a webhook">
      <Form label="Add a webhook" onSubmit={submit}>
        <EndpointFields value={endpoint} onValue={setEndpoint} error={action.error} />
        <SelectField
          label="App"
          name="appId"
          hint="Events of one app only, or of all your apps."
          value={appId}
          options={[{ value: '', label: 'All apps' }, ...namedOptions(apps)]}
          onValue={setAppId}
          error={action.error}
        />
        <Submit action={action}>Add webhook</Submit>
      </Form>
      <SecretOnce
        secret={created?.secret ?? null}
        title="Webhook signing secret"
        warning="Copy the secret now: you will not see it again."
        note="Your endpoint checks the X-Webhook-Signature header with it."
        label="Signing secret"
        what="Signing secret"
        copyLabel="Copy secret"
        onDone={finish}
      />
    </Section>
  );
}
