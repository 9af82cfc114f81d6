import { sql } from 'kysely';

/**
 * A buyer's e-mail address as the one-trial rule and payments compare it: trimmed, lower case,
 * and without a +tag in the local part (Ann+Trial@Example.com is ann@example.com). Dots stay:
 * only some providers ignore them, and elsewhere a.nn@ and ann@ are two people.
 */
export function normalizeBuyerAddress(email: string): string {
  return email
    .trim()
    .toLowerCase()
    .replace(/^([^@+]+)\+[^@]*@/, '$1@');
}

// The same rule in SQL, for stored addresses (kept trimmed) and for an address given; the index
// licenses_product_buyer_idx (migration 0020) holds this very expression over licenses.email.
const normalized = (value: unknown) =>
  sql<string>`regexp_replace(lower(${value}), '^([^@+]+)[+][^@]*@', '\\1@')`;

/** A stored address column, normalised in SQL. */
export const storedBuyerAddress = (column: string) => normalized(sql.ref(column));

/** An address given by a caller, normalised in SQL like the stored ones it is compared with. */
export const givenBuyerAddress = (email: string) => normalized(email.trim());
