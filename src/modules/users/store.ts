import { sql } from 'kysely';
import type { Executor } from '../../platform/db/database.js';
import type { UserRole, UserRow, UserTier } from '../../platform/db/schema.js';
import { containsPattern } from '../../platform/db/text-search.js';
import type { Page } from '../../platform/http/schemas.js';

const liveUsers = (executor: Executor) =>
  executor.selectFrom('users').selectAll().where('deleted_at', 'is', null);

export function findUserById(executor: Executor, id: string): Promise<UserRow | undefined> {
  return liveUsers(executor).where('id', '=', id).executeTakeFirst();
}

export function findUserByEmail(executor: Executor, email: string): Promise<UserRow | undefined> {
  return liveUsers(executor).where(sql<string>`lower(email)`, '=', email.toLowerCase()).executeTakeFirst();
}

export async function insertUser(
  executor: Executor,
  user: { id: string; email: string; name: string | null; passwordHash: string; role?: UserRole; now: Date },
): Promise<UserRow | undefined> {
  // The partial unique index on lower(email) settles races between two registrations.
  return executor
    .insertInto('users')
    .values({
      id: user.id,
      email: user.email,
      name: user.name,
      password_hash: user.passwordHash,
      role: user.role ?? 'SELLER',
      created_at: user.now,
      updated_at: user.now,
    })
    .onConflict((oc) => oc.expression(sql`lower(email)`).where('deleted_at', 'is', null).doNothing())
    .returningAll()
    .executeTakeFirst();
}

export function updateUser(
  executor: Executor,
  id: string,
  changes: { role?: UserRole; tier?: UserTier; passwordHash?: string; now: Date },
): Promise<UserRow | undefined> {
  return executor
    .updateTable('users')
    .set({
      ...(changes.role ? { role: changes.role } : {}),
      ...(changes.tier ? { tier: changes.tier } : {}),
      ...(changes.passwordHash ? { password_hash: changes.passwordHash } : {}),
      updated_at: changes.now,
    })
    .where('id', '=', id)
    .where('deleted_at', 'is', null)
    .returningAll()
    .executeTakeFirst();
}

export async function softDeleteUser(executor: Executor, id: string, now: Date): Promise<boolean> {
  const row = await executor
    .updateTable('users')
    .set({ deleted_at: now, updated_at: now })
    .where('id', '=', id)
    .where('deleted_at', 'is', null)
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

export interface UserFilter {
  email?: string;
  role?: UserRole;
  tier?: UserTier;
}

export async function listUsers(executor: Executor, filter: UserFilter, page: Page) {
  let query = executor.selectFrom('users').where('deleted_at', 'is', null);
  if (filter.email)
    query = query.where(sql<string>`lower(email)`, 'like', containsPattern(filter.email.toLowerCase()));
  if (filter.role) query = query.where('role', '=', filter.role);
  if (filter.tier) query = query.where('tier', '=', filter.tier);
  const [rows, total] = await Promise.all([
    query.selectAll().orderBy('created_at').orderBy('id').limit(page.limit).offset(page.offset).execute(),
    query.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(total.total) };
}
