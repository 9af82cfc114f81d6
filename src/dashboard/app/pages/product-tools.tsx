import { api } from '../api';
import { CopyButton, SecretValue } from '../components/copy';
import { useConfirm } from '../components/dialog';
import { ActionButton, FormError } from '../components/form';
import { Facts, Section, StatusBadge } from '../components/page';
import { useAnnounce } from '../components/status';
import { useAction } from '../components/use-api';
import { formatDateTime } from '../format';
import { navigate } from '../router';
import type { Product } from '../types';

/** What a seller does with a product beyond its fields: link, secret, availability, deletion. */
export function ProductTools({ product, onChanged }: { product: Product; onChanged(): void }) {
  const action = useAction();
  const announce = useAnnounce();
  const [confirm, confirmDialog] = useConfirm();

  const setActive = (active: boolean) =>
    action.run(async () => {
      await api.patch<Product>(`/products/${product.id}`, { active });
      announce(
        active
          ? 'Product activated: it can be bought again'
          : 'Product deactivated: it can no longer be bought',
      );
      onChanged();
    });
  const rotate = async () => {
    const yes = await confirm({
      title: 'Rotate the callback secret?',
      message:
        'A new secret is generated and the current one stops working at once. Update your servers right after.',
      action: 'Rotate secret',
      danger: true,
    });
    if (!yes) return;
    if (await action.run(() => api.post<Product>(`/products/${product.id}/rotate-callback-secret`))) {
      announce('Callback secret rotated');
      onChanged();
    }
  };
  const remove = async () => {
    const yes = await confirm({
      title: `Delete “${product.name}”?`,
      message:
        'Only a product no license, order or subscription refers to can be deleted; otherwise deactivate it.',
      action: 'Delete product',
      danger: true,
    });
    if (yes && (await action.run(() => api.delete(`/products/${product.id}`)))) {
      announce(`Product ${product.name} deleted`);
      navigate('/products');
    }
  };

  return (
    <Section title="Selling">
      <Facts
        facts={{
          State: (
            <>
              <StatusBadge status={product.active ? 'active' : 'inactive'} />{' '}
              <ActionButton action={action} onClick={() => setActive(!product.active)}>
                {product.active ? 'Deactivate' : 'Activate'}
              </ActionButton>
            </>
          ),
          'Checkout link': (
            <>
              <a href={product.checkoutUrl} rel="noreferrer" target="_blank">
                {product.checkoutUrl}
              </a>{' '}
              <CopyButton text={product.checkoutUrl} label="Copy checkout link" what="Checkout link" />
            </>
          ),
          'Callback secret': (
            <>
              <SecretValue value={product.callbackSecret} what="Callback secret" />{' '}
              <ActionButton action={action} kind="danger" onClick={rotate}>
                Rotate secret
              </ActionButton>
              <span class="hint">Signs redirects and merchant webhooks. Keep it on your servers.</span>
            </>
          ),
          Updated: formatDateTime(product.updatedAt),
        }}
      />
      <FormError error={action.error} />
      <ActionButton action={action} kind="danger" onClick={remove}>
        Delete product
      </ActionButton>
      {confirmDialog}
    </Section>
  );
}
