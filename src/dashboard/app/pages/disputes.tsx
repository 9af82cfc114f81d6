import { useState } from 'preact/hooks';
import { api } from '../api';
import { Loading, Page, Pager, StatusBadge } from '../components/page';
import { useLoad } from '../components/use-api';
import { formatDateTime, formatMoney, words } from '../format';
import { href } from '../router';
import type { Dispute, DisputeDetail, OffsetPage } from '../types';

export function DisputesPage() {
  const [offset, setOffset] = useState(0);
  const disputes = useLoad(
    () => api.get<OffsetPage<'disputes', Dispute>>('/disputes', { offset }),
    String(offset),
  );
  return (
    <Page title="Disputes">
      <p class="muted">Chargebacks buyers opened with their bank, as the card partner reports them.</p>
      <Loading state={disputes}>
        {(page) =>
          page.disputes.length === 0 ? (
            <p>No disputes. Good.</p>
          ) : (
            <>
              <table>
                <caption class="visually-hidden">Disputes</caption>
                <thead>
                  <tr>
                    <th scope="col">Opened</th>
                    <th scope="col">Amount</th>
                    <th scope="col">Reason</th>
                    <th scope="col">Status</th>
                    <th scope="col">Order</th>
                  </tr>
                </thead>
                <tbody>
                  {page.disputes.map((dispute) => (
                    <tr key={dispute.id}>
                      <th scope="row">
                        <a href={href(`/disputes/${dispute.id}`)}>{formatDateTime(dispute.createdAt)}</a>
                      </th>
                      <td>{formatMoney(dispute.amount, dispute.currency)}</td>
                      <td>{words(dispute.reason)}</td>
                      <td>
                        <StatusBadge status={dispute.status} />
                      </td>
                      <td>
                        <a href={href(`/orders/${dispute.orderId}`)}>Order</a>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
              <Pager
                label="Disputes"
                total={page.total}
                limit={page.limit}
                offset={page.offset}
                onOffset={setOffset}
              />
            </>
          )
        }
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
          <dl class="facts">
            <dt>Status</dt>
            <dd>
              <StatusBadge status={d.status} />
            </dd>
            <dt>Amount</dt>
            <dd>{formatMoney(d.amount, d.currency)}</dd>
            <dt>Reason</dt>
            <dd>{words(d.reason)}</dd>
            <dt>Evidence due by</dt>
            <dd>{formatDateTime(d.evidenceDueBy)}</dd>
            <dt>Order</dt>
            <dd>
              <a href={href(`/orders/${d.orderId}`)}>{d.orderId}</a>
            </dd>
            <dt>Opened</dt>
            <dd>{formatDateTime(d.createdAt)}</dd>
            <dt>Updated</dt>
            <dd>{formatDateTime(d.updatedAt)}</dd>
          </dl>
        )}
      </Loading>
    </Page>
  );
}
