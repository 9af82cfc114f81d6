import { api } from '../api';
import { EmptyState } from '../components/create-panel';
import { ListTable, Pager, useOffsetList } from '../components/list';
import { Facts, Loading, Page, StatusBadge } from '../components/page';
import { useLoad } from '../components/use-api';
import { formatDateTime, formatMoney, words } from '../format';
import { href } from '../router';
import type { Dispute, DisputeDetail, OffsetPage } from '../types';

export function DisputesPage() {
  const disputes = useOffsetList<OffsetPage<'disputes', Dispute>>('/disputes');
  return (
    <Page title="Disputes">
      <p class="muted">Chargebacks buyers opened with their bank, as the card partner reports them.</p>
      <Loading state={disputes}>
        {(page) => (
          <ListTable
            caption="Disputes"
            rows={page.disputes}
            empty={
              <EmptyState title="No disputes">
                When a buyer disputes a payment with their bank, it appears here and its license is suspended
                until the dispute is decided.
              </EmptyState>
            }
            columns={[
              {
                title: 'Opened',
                cell: (dispute) => (
                  <a href={href(`/disputes/${dispute.id}`)}>{formatDateTime(dispute.createdAt)}</a>
                ),
              },
              {
                title: 'Amount',
                card: 'figure',
                cell: (dispute) => formatMoney(dispute.amount, dispute.currency),
              },
              { title: 'Reason', cell: (dispute) => words(dispute.reason) },
              { title: 'Status', card: 'status', cell: (dispute) => <StatusBadge status={dispute.status} /> },
              { title: 'Order', cell: (dispute) => <a href={href(`/orders/${dispute.orderId}`)}>Order</a> },
            ]}
            pager={<Pager label="Disputes" page={page} onOffset={disputes.setOffset} />}
          />
        )}
      </Loading>
    </Page>
  );
}

export function DisputeDetailPage({ id }: { id: string }) {
  const dispute = useLoad(() => api.get<DisputeDetail>(`/disputes/${id}`), id);
  return (
    <Page title="Dispute">
      <p>
        <a href={href('/disputes')}>Back to disputes</a>
      </p>
      <Loading state={dispute}>
        {(d) => (
          <Facts
            facts={{
              Status: <StatusBadge status={d.status} />,
              Amount: formatMoney(d.amount, d.currency),
              Reason: words(d.reason),
              'Evidence due by': formatDateTime(d.evidenceDueBy),
              Order: <a href={href(`/orders/${d.orderId}`)}>{d.orderId}</a>,
              Opened: formatDateTime(d.createdAt),
              Updated: formatDateTime(d.updatedAt),
            }}
          />
        )}
      </Loading>
    </Page>
  );
}
