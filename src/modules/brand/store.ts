import { sql } from 'kysely';
import type { Executor } from '../../platform/db/database.js';
import { newId } from '../../platform/ids.js';
import type { LogoType } from './logo.js';

/** A brand as settings and pages read it: everything but the logo's bytes. */
export interface BrandRow {
  user_id: string;
  public_id: string;
  display_name: string | null;
  accent_color: string | null;
  overlay_origins: string[];
  logo_type: LogoType | null;
  logo_sha256: string | null;
  logo_width: number | null;
  logo_height: number | null;
  logo_bytes: number | null;
  updated_at: Date;
}

const BRAND_COLUMNS = [
  'user_id',
  'public_id',
  'display_name',
  'accent_color',
  'overlay_origins',
  'logo_type',
  'logo_sha256',
  'logo_width',
  'logo_height',
  'updated_at',
  sql<number | null>`octet_length(logo)`.as('logo_bytes'),
] as const;

function selectBrands(executor: Executor) {
  return executor.selectFrom('seller_brands').select(BRAND_COLUMNS);
}

/** The seller's brand, or undefined before their first change. */
export function findBrand(executor: Executor, userId: string): Promise<BrandRow | undefined> {
  return selectBrands(executor).where('user_id', '=', userId).executeTakeFirst();
}

/** The brands of the given sellers whose accounts are open. */
export function brandsOfSellers(executor: Executor, userIds: readonly string[]): Promise<BrandRow[]> {
  if (userIds.length === 0) return Promise.resolve([]);
  return selectBrands(executor)
    .where('user_id', 'in', [...new Set(userIds)])
    .where((eb) =>
      eb.exists(
        eb
          .selectFrom('users')
          .select('users.id')
          .whereRef('users.id', '=', 'seller_brands.user_id')
          .where('users.deleted_at', 'is', null),
      ),
    )
    .execute();
}

/** The product ids given, each with its seller's id. */
export async function sellersOfProducts(
  executor: Executor,
  productIds: readonly string[],
): Promise<Map<string, string>> {
  if (productIds.length === 0) return new Map();
  const rows = await executor
    .selectFrom('products')
    .select(['id', 'user_id'])
    .where('id', 'in', [...new Set(productIds)])
    .execute();
  return new Map(rows.map((row) => [row.id, row.user_id]));
}

type SettingChanges = Partial<{
  display_name: string | null;
  accent_color: string | null;
  overlay_origins: string[];
  logo: Uint8Array | null;
  logo_type: LogoType | null;
  logo_sha256: string | null;
  logo_width: number | null;
  logo_height: number | null;
}>;

/** Writes the changes, making the brand on the first one: one statement, so two first writers cannot both insert. */
export function saveBrand(
  executor: Executor,
  userId: string,
  changes: SettingChanges,
  now: Date,
): Promise<BrandRow> {
  return executor
    .insertInto('seller_brands')
    .values({ user_id: userId, public_id: newId(), ...changes, created_at: now, updated_at: now })
    .onConflict((oc) => oc.column('user_id').doUpdateSet({ ...changes, updated_at: now }))
    .returning(BRAND_COLUMNS)
    .executeTakeFirstOrThrow();
}

/** The logo under its public id, while its account is open; undefined when there is none. */
export function findLogo(
  executor: Executor,
  publicId: string,
): Promise<{ logo: Uint8Array; logo_type: LogoType; logo_sha256: string } | undefined> {
  return executor
    .selectFrom('seller_brands as b')
    .innerJoin('users as u', 'u.id', 'b.user_id')
    .select(['b.logo', 'b.logo_type', 'b.logo_sha256'])
    .where('b.public_id', '=', publicId)
    .where('u.deleted_at', 'is', null)
    .where('b.logo', 'is not', null)
    .executeTakeFirst() as Promise<
    { logo: Uint8Array; logo_type: LogoType; logo_sha256: string } | undefined
  >;
}
