import { api } from '../api';
import { EmptyState } from '../components/create-panel';
import { useConfirm } from '../components/dialog';
import { ActionButton, FormError, StatusSelect } from '../components/form';
import { ListTable, Pager, useOffsetList } from '../components/list';
import { Loading, Page, StatusBadge } from '../components/page';
import { useProducts } from '../components/product-names';
import { useAnnounce } from '../components/status';
import { useAction } from '../components/use-api';
import { formatDate, formatDateTime } from '../format';
import { href } from '../router';
import type { OffsetPage, Subscription } from '../types';

export function SubscriptionsPage() {
  const subscriptions = useOffsetList<OffsetPage<'subscriptions', Subscription>, { status: string }>(
    '/subscriptions',
    { status: '' },
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
        <StatusSelect
          statuses={['active', 'canceled']}
          value={subscriptions.filter.status}
          onValue={(status) => subscriptions.filterBy({ status })}
        />
      </div>
      <FormError error={action.error} />
      <Loading state={subscriptions}>
        {(page) => (
          <ListTable
            caption="Subscriptions"
            rows={page.subscriptions}
            empty={
              <EmptyState
                title="No subscriptions yet"
                action={
                  <a class="button secondary" href={href('/products/new')}>
                    Create a recurring product
                  </a>
                }
              >
                Buyers of recurring products appear here, with their renewals.
              </EmptyState>
            }
            columns={[
              { title: 'Subscriber', cell: (s) => s.email },
              { title: 'Product', cell: (s) => products.name(s.productId) },
              {
                title: 'Status',
                card: 'status',
                cell: (s) => (
                  <>
                    <StatusBadge status={s.status} />
                    {s.canceledAt ? ` ${formatDateTime(s.canceledAt)}` : ''}
                  </>
                ),
              },
              { title: 'Current period ends', card: 'figure', cell: (s) => formatDate(s.currentPeriodEnd) },
              { title: 'Started', cell: (s) => formatDate(s.createdAt) },
            ]}
            actions={(s) =>
              s.status === 'active' && (
                <ActionButton action={action} kind="danger" onClick={() => cancel(s)}>
                  Cancel <span class="visually-hidden">subscription of {s.email}</span>
                </ActionButton>
              )
            }
            pager={<Pager label="Subscriptions" page={page} onOffset={subscriptions.setOffset} />}
          />
        )}
      </Loading>
      {confirmDialog}
    </Page>
  );
}
