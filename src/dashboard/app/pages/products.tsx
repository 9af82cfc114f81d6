import { api } from '../api';
import { CopyButton } from '../components/copy';
import { EmptyState } from '../components/create-panel';
import { SelectField } from '../components/form';
import { ListTable, Pager, useOffsetList } from '../components/list';
import { Loading, Page, StatusBadge } from '../components/page';
import { useLoad } from '../components/use-api';
import { formatMoney, words } from '../format';
import { href } from '../router';
import type { App, OffsetPage, Product } from '../types';

const SHOWN = [
  { value: '', label: 'All products' },
  { value: 'true', label: 'Active only' },
  { value: 'false', label: 'Inactive only' },
];

export function ProductsPage() {
  const products = useOffsetList<OffsetPage<'products', Product>, { active: string }>('/products', {
    active: '',
  });
  const apps = useLoad(() => api.get<OffsetPage<'apps', App>>('/apps', { limit: 100 }), 'apps');
  const appName = (id: string) => apps.data?.apps.find((app) => app.id === id)?.name ?? '';
  return (
    <Page
      title="Products"
      actions={
        <a class="button primary" href={href('/products/new')}>
          New product
        </a>
      }
    >
      <div class="filters">
        <SelectField
          label="Show"
          name="active"
          value={products.filter.active}
          options={SHOWN}
          onValue={(active) => products.filterBy({ active })}
        />
      </div>
      <Loading state={products}>
        {(page) => (
          <ListTable
            caption="Products"
            rows={page.products}
            empty={
              products.filter.active ? (
                <p>No {products.filter.active === 'true' ? 'active' : 'inactive'} products.</p>
              ) : (
                <EmptyState
                  title="No products yet"
                  action={
                    <a class="button primary" href={href('/products/new')}>
                      Create your first product
                    </a>
                  }
                >
                  A product sells licenses of one of your apps through the hosted checkout, once or by
                  subscription.
                </EmptyState>
              )
            }
            columns={[
              {
                title: 'Name',
                cell: (product) => <a href={href(`/products/${product.id}`)}>{product.name}</a>,
              },
              { title: 'App', cell: (product) => appName(product.appId) },
              {
                title: 'Price',
                card: 'figure',
                cell: (product) => (
                  <>
                    {formatMoney(product.price, product.currency)}
                    {product.interval ? ` / ${product.interval}` : ''}
                  </>
                ),
              },
              { title: 'Type', cell: (product) => words(product.productType) },
              {
                title: 'State',
                card: 'status',
                cell: (product) => <StatusBadge status={product.active ? 'active' : 'inactive'} />,
              },
              {
                title: 'Checkout link',
                cell: (product) => (
                  <CopyButton
                    text={product.checkoutUrl}
                    label={`Copy checkout link of ${product.name}`}
                    what="Checkout link"
                  />
                ),
              },
            ]}
            pager={<Pager label="Products" page={page} onOffset={products.setOffset} />}
          />
        )}
      </Loading>
    </Page>
  );
}
