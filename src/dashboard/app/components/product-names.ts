import { api } from '../api';
import type { OffsetPage, Product } from '../types';
import { useLoad } from './use-api';

export interface ProductLookup {
  /** The product's name, its id's start while names load, or a dash for none. */
  name(id: string | null): string;
  find(id: string | null): Product | undefined;
}

/** The seller's products by id, for lists that only carry productId. */
export function useProducts(): ProductLookup {
  const products = useLoad(
    () => api.get<OffsetPage<'products', Product>>('/products', { limit: 100 }),
    'products',
  );
  const find = (id: string | null) => (id ? products.data?.products.find((p) => p.id === id) : undefined);
  return {
    find,
    name: (id) => (id ? (find(id)?.name ?? id.slice(0, 8)) : '—'),
  };
}
