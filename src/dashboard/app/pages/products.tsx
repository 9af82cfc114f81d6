import { useState } from 'preact/hooks';
import { api } from '../api';
import { CopyButton } from '../components/copy';
import { SelectField } from '../components/form';
import { Loading, Page, Pager, StatusBadge } from '../components/page';
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
  const [active, setActive] = useState('');
  const [offset, setOffset] = useState(0);
  const products = useLoad(
    () => api.get<OffsetPage<'products', Product>>('/products', { active, offset }),
    `${active}:${offset}`,
  );
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
          value={active}
          options={SHOWN}
          onValue={(value) => {
            setActive(value);
            setOffset(0);
          }}
        />
      </div>
      <Loading state={products}>
        {(page) =>
          page.products.length === 0 ? (
            <p>
              No products yet. <a href={href('/products/new')}>Create one</a> to sell licenses of an app.
            </p>
          ) : (
            <>
              <table>
                <caption class="visually-hidden">Products</caption>
                <thead>
                  <tr>
                    <th scope="col">Name</th>
                    <th scope="col">App</th>
                    <th scope="col">Price</th>
                    <th scope="col">Type</th>
                    <th scope="col">State</th>
                    <th scope="col">Checkout link</th>
                  </tr>
                </thead>
                <tbody>
                  {page.products.map((product) => (
                    <tr key={product.id}>
                      <th scope="row">
                        <a href={href(`/products/${product.id}`)}>{product.name}</a>
                      </th>
                      <td>{appName(product.appId)}</td>
                      <td>
                        {formatMoney(product.price, product.currency)}
                        {product.interval ? ` / ${product.interval}` : ''}
                      </td>
                      <td>{words(product.productType)}</td>
                      <td>
                        <StatusBadge status={product.active ? 'active' : 'inactive'} />
                      </td>
                      <td>
                        <CopyButton
                          text={product.checkoutUrl}
                          label={`Copy checkout link of ${product.name}`}
                          what="Checkout link"
                        />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
              <Pager
                label="Products"
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
