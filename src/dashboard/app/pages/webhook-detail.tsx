import { useEffect, useState } from 'preact/hooks';
import { api } from '../api';
import { CopyButton } from '../components/copy';
import { Dialog, useConfirm } from '../components/dialog';
import { EventsField } from '../components/events-field';
import { Form, FormError, TextField } from '../components/form';
import { Loading, Page, StatusBadge } from '../components/page';
import { useAnnounce } from '../components/status';
import { useAction, useLoad } from '../components/use-api';
import { formatDateTime } from '../format';
import { href, navigate } from '../router';
import type { DeliveryLog, SendOutcome, Webhook } from '../types';

interface LogPage {
  logs: DeliveryLog[];
  total: number;
  page: number;
  limit: number;
}

function outcomeText(what: string, outcome: SendOutcome): string {
  if (outcome.success) return `${what}: delivered, the endpoint answered ${outcome.statusCode}`;
  if (outcome.statusCode > 0) return `${what}: failed, the endpoint answered ${outcome.statusCode}`;
  return `${what}: failed, ${outcome.error ?? 'no answer from the endpoint'}`;
}

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
            <DeliveryLogs id={id} version={logVersion} onSent={() => setLogVersion((v) => v + 1)} />
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
    <section aria-labelledby="webhook-facts">
      <h2 id="webhook-facts">Endpoint</h2>
      <dl class="facts">
        <dt>URL</dt>
        <dd>
          <code>{webhook.url}</code>
        </dd>
        <dt>Events</dt>
        <dd>{webhook.events.join(', ')}</dd>
        <dt>State</dt>
        <dd>
          <StatusBadge status={webhook.status} />
          {webhook.disabledReason ? ` ${webhook.disabledReason}` : ''}
          {webhook.consecutiveFailures > 0 ? ` (${webhook.consecutiveFailures} failures in a row)` : ''}
        </dd>
        <dt>Last success</dt>
        <dd>{formatDateTime(webhook.lastSuccessAt)}</dd>
        <dt>Last failure</dt>
        <dd>{formatDateTime(webhook.lastFailureAt)}</dd>
      </dl>
      <div class="actions">
        <button type="button" class="primary" disabled={action.busy} onClick={sendTest}>
          Send test event
        </button>
        <button
          type="button"
          class="secondary"
          disabled={action.busy}
          onClick={() => setEnabled(!webhook.enabled)}
        >
          {webhook.enabled ? 'Disable' : 'Enable'}
        </button>
        <button type="button" class="secondary" disabled={action.busy} onClick={rotate}>
          Rotate secret
        </button>
        <button type="button" class="danger" disabled={action.busy} onClick={remove}>
          Delete webhook
        </button>
      </div>
      <FormError error={action.error} />
      {confirmDialog}
      <Dialog open={secret !== null} title="New signing secret" onClose={() => setSecret(null)}>
        {secret && (
          <>
            <p>
              <strong>Copy the secret now: you will not see it again.</strong>
            </p>
            <div class="field">
              <label for="rotated-webhook-secret">Signing secret</label>
              <input id="rotated-webhook-secret" readOnly value={secret} class="mono" />
            </div>
            <div class="actions">
              <CopyButton text={secret} label="Copy secret" what="Signing secret" />
              <button type="button" class="primary" onClick={() => setSecret(null)}>
                Done
              </button>
            </div>
          </>
        )}
      </Dialog>
    </section>
  );
}

function DeliveryLogs({ id, version, onSent }: { id: string; version: number; onSent(): void }) {
  const [pageNumber, setPageNumber] = useState(1);
  const logs = useLoad(
    () => api.get<LogPage>(`/webhooks/${id}/logs`, { page: pageNumber }),
    `${id}:${pageNumber}:${version}`,
  );
  const action = useAction();
  const announce = useAnnounce();
  const redeliver = (log: DeliveryLog) =>
    action.run(async () => {
      const outcome = await api.post<SendOutcome>(`/webhooks/${id}/deliveries/${log.deliveryId}/redeliver`);
      announce(outcomeText('Redelivery', outcome));
      onSent();
    });
  return (
    <section aria-labelledby="delivery-log">
      <h2 id="delivery-log">Delivery log</h2>
      <Loading state={logs}>
        {(page) =>
          page.logs.length === 0 ? (
            <p>Nothing delivered yet. Send a test event to try the endpoint.</p>
          ) : (
            <>
              <table>
                <caption class="visually-hidden">Delivery attempts, newest first</caption>
                <thead>
                  <tr>
                    <th scope="col">Sent</th>
                    <th scope="col">Event</th>
                    <th scope="col">Trigger</th>
                    <th scope="col">Result</th>
                    <th scope="col">Status code</th>
                    <th scope="col">Time</th>
                    <th scope="col">Response</th>
                    <th scope="col">
                      <span class="visually-hidden">Actions</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {page.logs.map((log) => (
                    <tr key={log.id}>
                      <th scope="row">{formatDateTime(log.createdAt)}</th>
                      <td>
                        {log.eventType}
                        {log.attempt > 1 ? ` (attempt ${log.attempt})` : ''}
                      </td>
                      <td>{log.trigger}</td>
                      <td>
                        <StatusBadge status={log.success ? 'success' : 'failed'} />
                      </td>
                      <td>{log.statusCode > 0 ? log.statusCode : '—'}</td>
                      <td>{log.durationMs} ms</td>
                      <td>
                        {log.error && <span class="field-problem">{log.error}</span>}
                        {log.responseBody ? (
                          <details>
                            <summary>Response body</summary>
                            <pre>{log.responseBody}</pre>
                          </details>
                        ) : (
                          !log.error && <span class="muted">empty</span>
                        )}
                      </td>
                      <td>
                        <button
                          type="button"
                          class="secondary"
                          disabled={action.busy}
                          onClick={() => redeliver(log)}
                        >
                          Redeliver{' '}
                          <span class="visually-hidden">
                            {log.eventType} sent {formatDateTime(log.createdAt)}
                          </span>
                        </button>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
              {page.total > page.limit && (
                <nav class="pager" aria-label="Delivery log pages">
                  <button
                    type="button"
                    class="secondary"
                    disabled={page.page <= 1}
                    onClick={() => setPageNumber(page.page - 1)}
                  >
                    Newer
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
                    Older
                  </button>
                </nav>
              )}
            </>
          )
        }
      </Loading>
      <FormError error={action.error} />
    </section>
  );
}

function EditWebhook({ webhook, onSaved }: { webhook: Webhook; onSaved(): void }) {
  const [url, setUrl] = useState(webhook.url);
  const [events, setEvents] = useState(webhook.events);
  useEffect(() => {
    setUrl(webhook.url);
    setEvents(webhook.events);
  }, [webhook]);
  const action = useAction();
  const announce = useAnnounce();
  const submit = () =>
    action.run(async () => {
      await api.put<Webhook>(`/webhooks/${webhook.id}`, { url, events });
      announce('Webhook saved');
      onSaved();
    });
  return (
    <section aria-labelledby="edit-webhook">
      <h2 id="edit-webhook">Change the webhook</h2>
      <Form label="Change the webhook" onSubmit={submit}>
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
        <FormError error={action.error} />
        <button type="submit" class="primary" disabled={action.busy}>
          Save webhook
        </button>
      </Form>
    </section>
  );
}
