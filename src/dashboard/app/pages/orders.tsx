import { api } from '../api';
import { EmptyState } from '../components/create-panel';
import { StatusSelect } from '../components/form';
import { ListTable, Pager, useOffsetList } from '../components/list';
import { Facts, Loading, Page, StatusBadge } from '../components/page';
import { useProducts } from '../components/product-names';
import { useLoad } from '../components/use-api';
import { formatDateTime, formatMoney } from '../format';
import { href } from '../router';
import { type OffsetPage, ORDER_STATUSES, type Order, type OrderDetail } from '../types';

export function OrdersPage() {
  const orders = useOffsetList<OffsetPage<'orders', Order>, { status: string }>('/orders', { status: '' });
  const products = useProducts();
  return (
    <Page title="Orders">
      <div class="filters">
        <StatusSelect
          statuses={ORDER_STATUSES}
          value={orders.filter.status}
          onValue={(status) => orders.filterBy({ status })}
        />
      </div>
      <Loading state={orders}>
        {(page) => (
          <ListTable
            caption="Orders"
            rows={page.orders}
            empty={
              <EmptyState
                title="No orders yet"
                action={
                  <a class="button secondary" href={href('/products')}>
                    Your products and their checkout links
                  </a>
                }
              >
                Orders appear here when buyers pay through checkout. Share a product’s checkout link to sell
                it.
              </EmptyState>
            }
            columns={[
              {
                title: 'Date',
                cell: (order) => <a href={href(`/orders/${order.id}`)}>{formatDateTime(order.createdAt)}</a>,
              },
              { title: 'Buyer', cell: (order) => order.email },
              { title: 'Product', cell: (order) => products.name(order.productId) },
              { title: 'Amount', cell: (order) => formatMoney(order.amount, order.currency) },
              { title: 'Status', cell: (order) => <StatusBadge status={order.status} /> },
              { title: 'Paid with', cell: (order) => order.paymentProvider },
            ]}
            pager={<Pager label="Orders" page={page} onOffset={orders.setOffset} />}
          />
        )}
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
        {(o) => {
          const appId = products.find(o.productId)?.appId;
          return (
            <Facts
              facts={{
                Status: <StatusBadge status={o.status} />,
                Amount: formatMoney(o.amount, o.currency),
                Buyer: o.email,
                Product: <a href={href(`/products/${o.productId}`)}>{products.name(o.productId)}</a>,
                'Paid with': o.paymentProvider,
                Transaction: <code>{o.transactionId}</code>,
                License:
                  o.licenseId && appId ? (
                    <a href={href(`/apps/${appId}/licenses/${o.licenseId}`)}>Open the license</a>
                  ) : (
                    (o.licenseId ?? '—')
                  ),
                Created: formatDateTime(o.createdAt),
                Updated: formatDateTime(o.updatedAt),
              }}
            />
          );
        }}
      </Loading>
    </Page>
  );
}
