import { useState } from 'preact/hooks';
import { api } from '../api';
import { formatDateTime } from '../format';
import type { DeliveryLog, NumberedPage, SendOutcome } from '../types';
import { ActionButton, FormError } from './form';
import { ListTable, NumberedPager } from './list';
import { Loading, Section, StatusBadge } from './page';
import { useAnnounce } from './status';
import { useAction, useLoad } from './use-api';

export function outcomeText(what: string, outcome: SendOutcome): string {
  if (outcome.success) return `${what}: delivered, the endpoint answered ${outcome.statusCode}`;
  if (outcome.statusCode > 0) return `${what}: failed, the endpoint answered ${outcome.statusCode}`;
  return `${what}: failed, ${outcome.error ?? 'no answer from the endpoint'}`;
}

/**
 * Delivery attempts of a core webhook endpoint (`/webhooks/:id`) or of a product's merchant
 * webhook (`/products/:id/merchant-webhook`): both answer the same log and redeliver routes.
 */
export function DeliveryLogs({
  base,
  title,
  empty,
  version,
  onSent,
}: {
  base: string;
  title: string;
  empty: string;
  version: number;
  onSent(): void;
}) {
  const [pageNumber, setPageNumber] = useState(1);
  const logs = useLoad(
    () => api.get<NumberedPage<'logs', DeliveryLog>>(`${base}/logs`, { page: pageNumber }),
    `${base}:${pageNumber}:${version}`,
  );
  const action = useAction();
  const announce = useAnnounce();
  const redeliver = (log: DeliveryLog) =>
    action.run(async () => {
      const outcome = await api.post<SendOutcome>(`${base}/deliveries/${log.deliveryId}/redeliver`);
      announce(outcomeText('Redelivery', outcome));
      onSent();
    });
  return (
    <Section title={title}>
      <Loading state={logs}>
        {(page) => (
          <ListTable
            caption="Delivery attempts, newest first"
            rows={page.logs}
            empty={<p>{empty}</p>}
            columns={[
              { title: 'Sent', cell: (log) => formatDateTime(log.createdAt) },
              {
                title: 'Event',
                card: 'figure',
                cell: (log) => (
                  <>
                    {log.eventType}
                    {log.attempt > 1 ? ` (attempt ${log.attempt})` : ''}
                  </>
                ),
              },
              { title: 'Trigger', cell: (log) => log.trigger },
              {
                title: 'Result',
                card: 'status',
                cell: (log) => <StatusBadge status={log.success ? 'success' : 'failed'} />,
              },
              { title: 'Status code', cell: (log) => (log.statusCode > 0 ? log.statusCode : '—') },
              { title: 'Time', cell: (log) => `${log.durationMs} ms` },
              {
                title: 'Response',
                cell: (log) => (
                  <>
                    {log.error && <span class="field-problem">{log.error}</span>}
                    {log.responseBody ? (
                      <details>
                        <summary>Response body</summary>
                        <pre>{log.responseBody}</pre>
                      </details>
                    ) : (
                      !log.error && <span class="muted">empty</span>
                    )}
                  </>
                ),
              },
            ]}
            actions={(log) => (
              <ActionButton action={action} onClick={() => redeliver(log)}>
                Redeliver{' '}
                <span class="visually-hidden">
                  {log.eventType} sent {formatDateTime(log.createdAt)}
                </span>
              </ActionButton>
            )}
            pager={
              <NumberedPager label={title} page={page} onPage={setPageNumber} previous="Newer" next="Older" />
            }
          />
        )}
      </Loading>
      <FormError error={action.error} />
    </Section>
  );
}
