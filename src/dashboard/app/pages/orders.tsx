import { useEffect, useState } from 'preact/hooks';
import { api } from '../api';
import { EmptyState } from '../components/create-panel';
import { SearchForm, StatusSelect, TextField } from '../components/form';
import { ExportLink, ListTable, Pager, ResultCount, useUrlList } from '../components/list';
import { Facts, Loading, Page, StatusBadge } from '../components/page';
import { useProducts } from '../components/product-names';
import { useLoad } from '../components/use-api';
import { formatDateTime, formatMoney } from '../format';
import { href } from '../router';
import { type OffsetPage, ORDER_STATUSES, type Order, type OrderDetail } from '../types';

/** The list's filters and sort, as the URL's query and the API's name them. */
const FIELDS = ['email', 'status', 'sort'] as const;
type Field = (typeof FIELDS)[number];

/** Orders newest first; filters and sort live in the URL (#/orders?email=…&sort=-amount). */
export function OrdersPage() {
  const orders = useUrlList<OffsetPage<'orders', Order>, Field>('/orders', FIELDS);
  const filterKey = JSON.stringify(orders.filter);
  const [draft, setDraft] = useState(orders.filter);
  useEffect(() => setDraft(orders.filter), [filterKey]);
  const searching = Boolean(orders.filter.email || orders.filter.status);
  const products = useProducts();
  return (
    <Page title="Orders">
      <SearchForm
        label="Search orders"
        onSearch={() => orders.filterBy({ ...draft, email: draft.email.trim() })}
        onClear={() => orders.filterBy({ email: '', status: '' })}
      >
        <TextField
          label="Buyer e-mail"
          name="email"
          hint="Any part of the address."
          value={draft.email}
          onValue={(email) => setDraft({ ...draft, email })}
        />
        <StatusSelect
          statuses={ORDER_STATUSES}
          value={draft.status}
          onValue={(status) => setDraft({ ...draft, status })}
        />
      </SearchForm>
      <Loading state={orders}>
        {(page) => (
          <>
            {searching && (
              <ResultCount
                total={page.total}
                noun={['order', 'orders']}
                searching
                none="No order matches this search."
              />
            )}
            {page.total > 0 && (
              <ExportLink path="/orders/export.csv" query={orders.apiQuery} filename="orders.csv" />
            )}
            <ListTable
              caption="Orders"
              rows={page.orders}
              busy={orders.loading}
              sorting={{
                sort: orders.filter.sort || '-createdAt',
                onSort: (sort) => orders.filterBy({ sort }),
              }}
              empty={
                searching ? null : (
                  <EmptyState
                    title="No orders yet"
                    action={
                      <a class="button secondary" href={href('/products')}>
                        Your products and their checkout links
                      </a>
                    }
                  >
                    Orders appear here when buyers pay through checkout. Share a product’s checkout link to
                    sell it.
                  </EmptyState>
                )
              }
              columns={[
                {
                  title: 'Date',
                  sort: '-createdAt',
                  cell: (order) => (
                    <a href={href(`/orders/${order.id}`)}>{formatDateTime(order.createdAt)}</a>
                  ),
                },
                { title: 'Buyer', sort: 'email', cell: (order) => <span class="break">{order.email}</span> },
                { title: 'Product', cell: (order) => products.name(order.productId) },
                {
                  title: 'Amount',
                  sort: '-amount',
                  card: 'figure',
                  cell: (order) => formatMoney(order.amount, order.currency),
                },
                {
                  title: 'Status',
                  sort: 'status',
                  card: 'status',
                  cell: (order) => <StatusBadge status={order.status} />,
                },
                { title: 'Paid with', cell: (order) => order.paymentProvider },
              ]}
              pager={<Pager label="Orders" page={page} onOffset={orders.setOffset} />}
            />
          </>
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
