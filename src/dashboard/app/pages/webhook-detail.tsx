import { useEffect, useState } from 'preact/hooks';
import { api } from '../api';
import { DeliveryLogs, outcomeText } from '../components/delivery-log';
import { SecretOnce, useConfirm } from '../components/dialog';
import { ActionButton, Form, FormError, Submit } from '../components/form';
import { Facts, Loading, Page, Section, StatusBadge } from '../components/page';
import { useAnnounce } from '../components/status';
import { useAction, useLoad } from '../components/use-api';
import { type Endpoint, EndpointFields } from '../components/webhook-fields';
import { formatDateTime, plural } from '../format';
import { href, navigate } from '../router';
import type { SendOutcome, Webhook } from '../types';

export function WebhookDetailPage({ id }: { id: string }) {
  const webhook = useLoad(() => api.get<Webhook>(`/webhooks/${id}`), id);
  const [logVersion, setLogVersion] = useState(0);
  return (
    <Page title="Webhook">
      <p>
        <a href={href('/webhooks')}>Back to webhooks</a>
      </p>
      <Loading state={webhook}>
        {(loaded) => (
          <>
            <WebhookFacts
              webhook={loaded}
              onChanged={() => {
                webhook.reload();
                setLogVersion((v) => v + 1);
              }}
            />
            <DeliveryLogs
              base={`/webhooks/${id}`}
              title="Delivery log"
              empty="Nothing delivered yet. Send a test event to try the endpoint."
              version={logVersion}
              onSent={() => setLogVersion((v) => v + 1)}
            />
            <EditWebhook webhook={loaded} onSaved={webhook.reload} />
          </>
        )}
      </Loading>
    </Page>
  );
}

function WebhookFacts({ webhook, onChanged }: { webhook: Webhook; onChanged(): void }) {
  const action = useAction();
  const announce = useAnnounce();
  const [confirm, confirmDialog] = useConfirm();
  const [secret, setSecret] = useState<string | null>(null);
  const base = `/webhooks/${webhook.id}`;

  const sendTest = () =>
    action.run(async () => {
      announce(outcomeText('Test event', await api.post<SendOutcome>(`${base}/test`)));
      onChanged();
    });
  const setEnabled = (enabled: boolean) =>
    action.run(async () => {
      await api.post<Webhook>(`${base}/${enabled ? 'enable' : 'disable'}`);
      announce(enabled ? 'Webhook enabled' : 'Webhook disabled');
      onChanged();
    });
  const rotate = async () => {
    const yes = await confirm({
      title: 'Rotate the signing secret?',
      message: 'Deliveries are signed with a new secret from now on; update your endpoint right after.',
      action: 'Rotate secret',
      danger: true,
    });
    if (yes)
      await action.run(async () =>
        setSecret((await api.post<{ secret: string }>(`${base}/rotate-secret`)).secret),
      );
  };
  const remove = async () => {
    const yes = await confirm({
      title: 'Delete this webhook?',
      message: 'No more events are sent to it, and its delivery log is gone.',
      action: 'Delete webhook',
      danger: true,
    });
    if (yes && (await action.run(() => api.delete(base)))) {
      announce('Webhook deleted');
      navigate('/webhooks');
    }
  };

  return (
    <Section title="Endpoint">
      <Facts
        facts={{
          URL: <code>{webhook.url}</code>,
          Events: webhook.events.join(', '),
          State: (
            <>
              <StatusBadge status={webhook.status} />
              {webhook.disabledReason ? ` ${webhook.disabledReason}` : ''}
              {webhook.consecutiveFailures > 0
                ? ` (${plural(webhook.consecutiveFailures, 'failure', 'failures')} in a row)`
                : ''}
            </>
          ),
          'Last success': formatDateTime(webhook.lastSuccessAt),
          'Last failure': formatDateTime(webhook.lastFailureAt),
        }}
      />
      <div class="actions">
        <ActionButton action={action} kind="primary" onClick={sendTest}>
          Send test event
        </ActionButton>
        <ActionButton action={action} onClick={() => setEnabled(!webhook.enabled)}>
          {webhook.enabled ? 'Disable' : 'Enable'}
        </ActionButton>
        <ActionButton action={action} onClick={rotate}>
          Rotate secret
        </ActionButton>
        <ActionButton action={action} kind="danger" onClick={remove}>
          Delete webhook
        </ActionButton>
      </div>
      <FormError error={action.error} />
      {confirmDialog}
      <SecretOnce
        secret={secret}
        title="New signing secret"
        warning="Copy the secret now: you will not see it again."
        label="Signing secret"
        what="Signing secret"
        copyLabel="Copy secret"
        onDone={() => setSecret(null)}
      />
    </Section>
  );
}

function EditWebhook({ webhook, onSaved }: { webhook: Webhook; onSaved(): void }) {
  const [endpoint, setEndpoint] = useState<Endpoint>({ url: webhook.url, events: webhook.events });
  useEffect(() => setEndpoint({ url: webhook.url, events: webhook.events }), [webhook]);
  const action = useAction();
  const announce = useAnnounce();
  const submit = () =>
    action.run(async () => {
      await api.put<Webhook>(`/webhooks/${webhook.id}`, endpoint);
      announce('Webhook saved');
      onSaved();
    });
  return (
    <Section title="Change the webhook">
      <Form label="Change the webhook" onSubmit={submit}>
        <EndpointFields value={endpoint} onValue={setEndpoint} error={action.error} />
        <Submit action={action}>Save webhook</Submit>
      </Form>
    </Section>
  );
}
