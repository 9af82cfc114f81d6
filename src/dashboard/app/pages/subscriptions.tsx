import { useState } from 'preact/hooks';
import { api } from '../api';
import { useConfirm } from '../components/dialog';
import { FormError, SelectField } from '../components/form';
import { Loading, Page, Pager, StatusBadge } from '../components/page';
import { useProducts } from '../components/product-names';
import { useAnnounce } from '../components/status';
import { useAction, useLoad } from '../components/use-api';
import { formatDate, formatDateTime } from '../format';
import type { OffsetPage, Subscription } from '../types';

export function SubscriptionsPage() {
  const [status, setStatus] = useState('');
  const [offset, setOffset] = useState(0);
  const subscriptions = useLoad(
    () => api.get<OffsetPage<'subscriptions', Subscription>>('/subscriptions', { status, offset }),
    `${status}:${offset}`,
  );
  const products = useProducts();
  const action = useAction();
  const announce = useAnnounce();
  const [confirm, confirmDialog] = useConfirm();
  const cancel = async (subscription: Subscription) => {
    const yes = await confirm({
      title: `Cancel the subscription of ${subscription.email}?`,
      message: 'No further renewals are charged. This cannot be undone.',
      action: 'Cancel subscription',
      danger: true,
    });
    if (yes && (await action.run(() => api.post(`/subscriptions/${subscription.id}/cancel`)))) {
      announce(`Subscription of ${subscription.email} canceled`);
      subscriptions.reload();
    }
  };
  return (
    <Page title="Subscriptions">
      <div class="filters">
        <SelectField
          label="Status"
          name="status"
          value={status}
          options={[
            { value: '', label: 'Any status' },
            { value: 'active', label: 'active' },
            { value: 'canceled', label: 'canceled' },
          ]}
          onValue={(value) => {
            setStatus(value);
            setOffset(0);
          }}
        />
      </div>
      <FormError error={action.error} />
      <Loading state={subscriptions}>
        {(page) =>
          page.subscriptions.length === 0 ? (
            <p>No subscriptions yet. Buyers of recurring products appear here.</p>
          ) : (
            <>
              <table>
                <caption class="visually-hidden">Subscriptions</caption>
                <thead>
                  <tr>
                    <th scope="col">Subscriber</th>
                    <th scope="col">Product</th>
                    <th scope="col">Status</th>
                    <th scope="col">Current period ends</th>
                    <th scope="col">Started</th>
                    <th scope="col">
                      <span class="visually-hidden">Actions</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {page.subscriptions.map((s) => (
                    <tr key={s.id}>
                      <th scope="row">{s.email}</th>
                      <td>{products.name(s.productId)}</td>
                      <td>
                        <StatusBadge status={s.status} />
                        {s.canceledAt ? ` ${formatDateTime(s.canceledAt)}` : ''}
                      </td>
                      <td>{formatDate(s.currentPeriodEnd)}</td>
                      <td>{formatDate(s.createdAt)}</td>
                      <td>
                        {s.status === 'active' && (
                          <button
                            type="button"
                            class="danger"
                            disabled={action.busy}
                            onClick={() => cancel(s)}
                          >
                            Cancel <span class="visually-hidden">subscription of {s.email}</span>
                          </button>
                        )}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
              <Pager
                label="Subscriptions"
                total={page.total}
                limit={page.limit}
                offset={page.offset}
                onOffset={setOffset}
              />
            </>
          )
        }
      </Loading>
      {confirmDialog}
    </Page>
  );
}
