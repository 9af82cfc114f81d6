import { type RawBuilder, sql } from 'kysely';

/*
 * The order of a seller's list: one column, ascending or descending, then the row's id the same
 * way, so rows that tie keep one stable order; empty values last whichever the direction. Pages
 * of the API read it by offset; an export reads it by keyset (after the last row's value and id),
 * so it never skips or repeats a row between pages and never holds more than one page.
 */

/** A column a list can be sorted on, with its SQL type to read a cursor's text back exactly. */
export interface SortColumn {
  value: RawBuilder<unknown>;
  type: 'timestamptz' | 'numeric' | 'text';
}

export interface ListOrder {
  column: SortColumn;
  descending: boolean;
  /** The row's id: the tie-break. */
  id: RawBuilder<unknown>;
}

/** Where a keyset page starts: after the row with this sort value (as text) and id. */
export interface Cursor {
  value: string | null;
  id: string;
}

/** Rows an export reads at a time. */
export const EXPORT_PAGE_SIZE = 500;

/** The ORDER BY of `order`. */
export function orderClause(order: ListOrder): RawBuilder<unknown> {
  const direction = sql.raw(order.descending ? 'desc' : 'asc');
  return sql`${order.column.value} ${direction} nulls last, ${order.id} ${direction}`;
}

/** The sort value as text, selected beside each row an export reads (the next cursor). */
export function sortKey(order: ListOrder): RawBuilder<string | null> {
  return sql<string | null>`(${order.column.value})::text`;
}

/**
 * Rows after `cursor` in `order`. The value goes back as its own type from the text it was read
 * as, so a timestamp keeps its microseconds and no row is read twice.
 */
export function afterCursor(order: ListOrder, cursor: Cursor): RawBuilder<boolean> {
  const past = sql.raw(order.descending ? '<' : '>');
  const { value } = order.column;
  if (cursor.value === null) return sql<boolean>`(${value} is null and ${order.id} ${past} ${cursor.id})`;
  const last = sql`cast(${cursor.value} as ${sql.raw(order.column.type)})`;
  return sql<boolean>`(${value} ${past} ${last}
    or (${value} = ${last} and ${order.id} ${past} ${cursor.id})
    or ${value} is null)`;
}

/**
 * Every row of a list, read a page at a time after the last row read: `page` reads `size` rows
 * after the cursor (from the start for null), each with its `sort_key`.
 */
export async function* keysetRows<R extends { id: string; sort_key: string | null }>(
  page: (after: Cursor | null, size: number) => Promise<R[]>,
  size = EXPORT_PAGE_SIZE,
): AsyncGenerator<R> {
  let cursor: Cursor | null = null;
  for (;;) {
    const rows = await page(cursor, size);
    yield* rows;
    const last = rows.at(-1);
    if (!last || rows.length < size) return;
    cursor = { value: last.sort_key, id: last.id };
  }
}
