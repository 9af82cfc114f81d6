import { useState } from 'preact/hooks';
import { api } from '../api';
import { SelectField } from '../components/form';
import { Loading, Page, Pager, StatusBadge } from '../components/page';
import { useProducts } from '../components/product-names';
import { useLoad } from '../components/use-api';
import { formatDateTime, formatMoney } from '../format';
import { href } from '../router';
import { type OffsetPage, ORDER_STATUSES, type Order, type OrderDetail } from '../types';

export function OrdersPage() {
  const [status, setStatus] = useState('');
  const [offset, setOffset] = useState(0);
  const orders = useLoad(
    () => api.get<OffsetPage<'orders', Order>>('/orders', { status, offset }),
    `${status}:${offset}`,
  );
  const products = useProducts();
  return (
    <Page title="Orders">
      <div class="filters">
        <SelectField
          label="Status"
          name="status"
          value={status}
          options={[
            { value: '', label: 'Any status' },
            ...ORDER_STATUSES.map((s) => ({ value: s, label: s })),
          ]}
          onValue={(value) => {
            setStatus(value);
            setOffset(0);
          }}
        />
      </div>
      <Loading state={orders}>
        {(page) =>
          page.orders.length === 0 ? (
            <p>No orders yet. They appear here when buyers pay through checkout.</p>
          ) : (
            <>
              <table>
                <caption class="visually-hidden">Orders</caption>
                <thead>
                  <tr>
                    <th scope="col">Date</th>
                    <th scope="col">Buyer</th>
                    <th scope="col">Product</th>
                    <th scope="col">Amount</th>
                    <th scope="col">Status</th>
                    <th scope="col">Paid with</th>
                  </tr>
                </thead>
                <tbody>
                  {page.orders.map((order) => (
                    <tr key={order.id}>
                      <th scope="row">
                        <a href={href(`/orders/${order.id}`)}>{formatDateTime(order.createdAt)}</a>
                      </th>
                      <td>{order.email}</td>
                      <td>{products.name(order.productId)}</td>
                      <td>{formatMoney(order.amount, order.currency)}</td>
                      <td>
                        <StatusBadge status={order.status} />
                      </td>
                      <td>{order.paymentProvider}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
              <Pager
                label="Orders"
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

export function OrderDetailPage({ id }: { id: string }) {
  const order = useLoad(() => api.get<OrderDetail>(`/orders/${id}`), id);
  const products = useProducts();
  return (
    <Page title="Order">
      <p>
        <a href={href('/orders')}>Back to orders</a>
      </p>
      <Loading state={order}>
        {(o) => (
          <dl class="facts">
            <dt>Status</dt>
            <dd>
              <StatusBadge status={o.status} />
            </dd>
            <dt>Amount</dt>
            <dd>{formatMoney(o.amount, o.currency)}</dd>
            <dt>Buyer</dt>
            <dd>{o.email}</dd>
            <dt>Product</dt>
            <dd>
              <a href={href(`/products/${o.productId}`)}>{products.name(o.productId)}</a>
            </dd>
            <dt>Paid with</dt>
            <dd>{o.paymentProvider}</dd>
            <dt>Transaction</dt>
            <dd>
              <code>{o.transactionId}</code>
            </dd>
            <dt>License</dt>
            <dd>
              {o.licenseId && products.find(o.productId) ? (
                <a href={href(`/apps/${products.find(o.productId)?.appId}/licenses/${o.licenseId}`)}>
                  Open the license
                </a>
              ) : (
                (o.licenseId ?? '—')
              )}
            </dd>
            <dt>Created</dt>
            <dd>{formatDateTime(o.createdAt)}</dd>
            <dt>Updated</dt>
            <dd>{formatDateTime(o.updatedAt)}</dd>
          </dl>
        )}
      </Loading>
    </Page>
  );
}
