import { randomBytes } from 'node:crypto';
import type { Clock } from '../../platform/clock.js';
import type { Db, Executor } from '../../platform/db/database.js';
import type { UserRole, UserRow, UserTier } from '../../platform/db/schema.js';
import { AppError, notFound } from '../../platform/errors.js';
import type { Principal } from '../../platform/http/principal.js';
import { iso, type Page } from '../../platform/http/schemas.js';
import { newId } from '../../platform/ids.js';
import type { Log } from '../../platform/log.js';
import { recordEvent } from '../events/index.js';
import { hashPassword, verifyPassword } from './password.js';
import type { UserResource } from './schemas.js';
import * as store from './store.js';
import type { UserTokenSigner } from './user-token.js';

export interface UserServiceDeps {
  db: Db;
  clock: Clock;
  log: Log;
  tokens: UserTokenSigner;
  passwordHashCost: number;
  /**
   * Verification holds each seller's tier and drops a deleted seller's licenses: a change to
   * either is announced in its transaction, then forgotten on this node (licenses' index.ts).
   */
  sellerChanges: {
    announceSeller(executor: Executor, sellerId: string): Promise<unknown>;
    forgetSeller(sellerId: string): void;
  };
}

export type UserService = ReturnType<typeof createUserService>;

export function createUserService({
  db,
  clock,
  log,
  tokens,
  passwordHashCost,
  sellerChanges,
}: UserServiceDeps) {
  // Hashed once so that a login for an unknown e-mail costs the same as a wrong password.
  const decoyHash = hashPassword(randomBytes(16).toString('hex'), passwordHashCost);

  /** Inserts the account and its user.registered event; hash the password before the transaction. */
  async function createAccount(
    executor: Executor,
    input: { email: string; passwordHash: string; name?: string | null; role?: UserRole },
  ) {
    const now = clock.now();
    const user = await store.insertUser(executor, {
      id: newId(),
      email: input.email.trim(),
      name: input.name?.trim() || null,
      passwordHash: input.passwordHash,
      role: input.role,
      now,
    });
    if (!user) throw new AppError('email_taken', 'An account with this e-mail already exists');
    await recordEvent(executor, {
      type: 'user.registered',
      userId: user.id,
      data: { id: user.id, email: user.email, name: user.name, createdAt: iso(user.created_at) },
      occurredAt: now,
    });
    return user;
  }

  async function session(user: UserRow) {
    const { token, expiresAt } = await tokens.sign(user.id);
    return { token, expiresAt: iso(expiresAt), user: toUser(user) };
  }

  return {
    async register(input: { email: string; password: string; name?: string }) {
      const passwordHash = await hashPassword(input.password, passwordHashCost);
      const user = await db.transaction().execute((trx) => createAccount(trx, { ...input, passwordHash }));
      log.info({ userId: user.id }, 'user.registered');
      return session(user);
    },

    async login(input: { email: string; password: string }) {
      const user = await store.findUserByEmail(db, input.email.trim());
      const matches = await verifyPassword(input.password, user?.password_hash ?? (await decoyHash));
      if (!user || !matches) {
        log.info('user.login.rejected');
        throw new AppError('invalid_credentials', 'E-mail or password is incorrect');
      }
      return session(user);
    },

    async me(principal: Principal) {
      const user = await store.findUserById(db, principal.userId);
      if (!user) throw new AppError('unauthorized', 'The account no longer exists');
      const { credential } = principal;
      return {
        user: toUser(user),
        credential:
          credential.kind === 'api_key'
            ? { kind: credential.kind, appId: credential.appId, apiKeyId: credential.apiKeyId }
            : { kind: credential.kind },
      };
    },

    /** The live account behind a session token; null once it is deleted. */
    findActive(userId: string) {
      return store.findUserById(db, userId);
    },

    async list(filter: store.UserFilter, page: Page) {
      const { rows, total } = await store.listUsers(db, filter, page);
      return { users: rows.map(toUser), total, ...page };
    },

    async update(admin: Principal, userId: string, changes: { role?: UserRole; tier?: UserTier }) {
      if (userId === admin.userId && changes.role && changes.role !== 'ADMIN') {
        throw new AppError('conflict', 'An admin cannot remove their own ADMIN role');
      }
      const user = await db.transaction().execute(async (trx) => {
        const updated = await store.updateUser(trx, userId, { ...changes, now: clock.now() });
        if (updated && changes.tier) await sellerChanges.announceSeller(trx, userId);
        return updated;
      });
      if (changes.tier) sellerChanges.forgetSeller(userId);
      if (!user) throw notFound('User');
      log.info({ userId, by: admin.userId, ...changes }, 'user.updated');
      return toUser(user);
    },

    async remove(admin: Principal, userId: string) {
      if (userId === admin.userId) throw new AppError('conflict', 'An admin cannot delete their own account');
      const deleted = await db.transaction().execute(async (trx) => {
        if (!(await store.softDeleteUser(trx, userId, clock.now()))) return false;
        await sellerChanges.announceSeller(trx, userId);
        return true;
      });
      sellerChanges.forgetSeller(userId);
      if (!deleted) throw notFound('User');
      log.info({ userId, by: admin.userId }, 'user.deleted');
    },

    /**
     * Makes sure an admin account exists for this e-mail. A missing account is created with the
     * password. An existing account is promoted only by an explicit operator action
     * (`resetPassword`, the CLI, which also sets the password) or when it already holds this
     * password: e-mails are not verified, so whoever registered the address first must not
     * become an admin just because the operator configured it.
     */
    async ensureAdmin(input: { email: string; password: string; resetPassword: boolean }) {
      const passwordHash = await hashPassword(input.password, passwordHashCost);
      const promote = async (existing: UserRow) => {
        if (existing.role === 'ADMIN' && !input.resetPassword)
          return { user: toUser(existing), outcome: 'unchanged' as const };
        if (!input.resetPassword && !(await verifyPassword(input.password, existing.password_hash))) {
          log.error(
            { userId: existing.id },
            'admin.ensure.refused: an account with this e-mail exists without this password; use `licensing admin create`',
          );
          return { user: toUser(existing), outcome: 'refused' as const };
        }
        const user = await store.updateUser(db, existing.id, {
          role: 'ADMIN',
          ...(input.resetPassword ? { passwordHash } : {}),
          now: clock.now(),
        });
        log.info({ userId: existing.id }, 'admin.promoted');
        return { user: toUser(user ?? existing), outcome: 'promoted' as const };
      };
      const existing = await store.findUserByEmail(db, input.email.trim());
      if (existing) return promote(existing);
      try {
        const user = await db
          .transaction()
          .execute((trx) => createAccount(trx, { email: input.email, passwordHash, role: 'ADMIN' }));
        log.info({ userId: user.id }, 'admin.created');
        return { user: toUser(user), outcome: 'created' as const };
      } catch (error) {
        // Another node starting at the same moment created it first.
        const raced =
          error instanceof AppError && error.code === 'email_taken'
            ? await store.findUserByEmail(db, input.email.trim())
            : null;
        if (!raced) throw error;
        return promote(raced);
      }
    },
  };
}

export function toUser(row: UserRow): UserResource {
  return {
    id: row.id,
    email: row.email,
    name: row.name,
    role: row.role,
    tier: row.tier,
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  };
}
