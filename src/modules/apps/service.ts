import type { Clock } from '../../platform/clock.js';
import type { Db, Executor } from '../../platform/db/database.js';
import { isStillReferenced } from '../../platform/db/errors.js';
import type { AppRow, ClientAddressPolicy, SigningAlgorithm } from '../../platform/db/schema.js';
import { AppError, notFound } from '../../platform/errors.js';
import { type IdempotentAnswer, transactionWithAnswer } from '../../platform/http/idempotency.js';
import { apiKeyAppId, type Principal } from '../../platform/http/principal.js';
import { iso, type Page } from '../../platform/http/schemas.js';
import { newId } from '../../platform/ids.js';
import type { Log } from '../../platform/log.js';
import { recordEvent } from '../events/index.js';
import { DEFAULT_SIGNING_ALGORITHM } from '../license-tokens/index.js';
import * as store from './store.js';

export interface AppServiceDeps {
  db: Db;
  clock: Clock;
  log: Log;
  /**
   * The verification cache holds each license's app's tokenAlgorithm: a change of it is announced
   * in its transaction as a change of the seller's licenses (rare, so the whole seller is dropped),
   * then forgotten on this node.
   */
  licenseChanges: {
    announceSeller(executor: Executor, sellerId: string): Promise<unknown>;
    forgetSeller(sellerId: string): void;
  };
}

/** What an app is created or changed with. */
export interface AppInput {
  name: string;
  description?: string;
  tokenAlgorithm?: SigningAlgorithm;
  clientAddresses?: ClientAddressPolicy;
}

export type AppService = ReturnType<typeof createAppService>;

export function createAppService({ db, clock, log, licenseChanges }: AppServiceDeps) {
  /**
   * The app, when the caller may act on it. Another seller's app is "not found" (its
   * existence is not revealed); an API key of the same seller but for another app is refused.
   */
  async function requireOwnedApp(principal: Principal, appId: string): Promise<AppRow> {
    const app = await store.findOwnedApp(db, principal.userId, appId);
    if (!app) throw notFound('App');
    const keyApp = apiKeyAppId(principal);
    if (keyApp && keyApp !== app.id) {
      throw new AppError('app_scope_mismatch', 'This API key belongs to another app');
    }
    return app;
  }

  return {
    requireOwnedApp,

    /**
     * The app with this id, whoever owns it, or undefined. For the operator at the command line,
     * who acts on any seller's app; a route would reveal other sellers' apps with it.
     */
    findAnyApp(appId: string): Promise<AppRow | undefined> {
      return store.findAppById(db, appId);
    },

    async create(principal: Principal, input: AppInput, answer?: IdempotentAnswer<ReturnType<typeof toApp>>) {
      const now = clock.now();
      const app = await transactionWithAnswer(db, answer, async (trx) => {
        const row = await store.insertApp(trx, {
          id: newId(),
          userId: principal.userId,
          name: input.name.trim(),
          description: input.description?.trim() ?? '',
          tokenAlgorithm: input.tokenAlgorithm ?? DEFAULT_SIGNING_ALGORITHM,
          clientAddresses: input.clientAddresses ?? 'truncated',
          now,
        });
        const created = toApp(row);
        await recordEvent(trx, {
          type: 'app.created',
          userId: row.user_id,
          appId: row.id,
          data: created,
          occurredAt: now,
        });
        return created;
      });
      log.info({ appId: app.id, userId: app.userId }, 'app.created');
      return app;
    },

    async get(principal: Principal, appId: string) {
      return toApp(await requireOwnedApp(principal, appId));
    },

    async list(principal: Principal, page: Page) {
      const { rows, total } = await store.listApps(db, principal.userId, apiKeyAppId(principal), page);
      return { apps: rows.map(toApp), total, ...page };
    },

    /**
     * Renames, describes or changes the signing algorithm or the client address setting of an
     * app. Both of these are held by verification (what signs, what a timeline entry keeps): a
     * change is announced in the same transaction, and applies to what is signed or written after.
     */
    async update(principal: Principal, appId: string, changes: Partial<AppInput>) {
      const now = clock.now();
      const fields = {
        name: changes.name?.trim(),
        description: changes.description?.trim(),
        tokenAlgorithm: changes.tokenAlgorithm,
        clientAddresses: changes.clientAddresses,
        now,
      };
      let algorithmChanged = false;
      let addressesChanged = false;
      const row =
        changes.tokenAlgorithm === undefined && changes.clientAddresses === undefined
          ? await store.updateApp(db, principal.userId, appId, fields)
          : await db.transaction().execute(async (trx) => {
              const before = await store.findOwnedApp(trx, principal.userId, appId, { forUpdate: true });
              if (!before) return undefined;
              const updated = await store.updateApp(trx, principal.userId, appId, fields);
              algorithmChanged =
                changes.tokenAlgorithm !== undefined && before.token_algorithm !== changes.tokenAlgorithm;
              addressesChanged =
                changes.clientAddresses !== undefined && before.client_addresses !== changes.clientAddresses;
              if (algorithmChanged || addressesChanged)
                await licenseChanges.announceSeller(trx, principal.userId);
              return updated;
            });
      if (algorithmChanged || addressesChanged) licenseChanges.forgetSeller(principal.userId);
      if (algorithmChanged)
        log.info({ appId, tokenAlgorithm: changes.tokenAlgorithm }, 'app.token_algorithm.changed');
      if (addressesChanged)
        log.info({ appId, clientAddresses: changes.clientAddresses }, 'app.client_addresses.changed');
      if (!row) throw notFound('App');
      return toApp(row);
    },

    /** Deletes the app and its API keys; refused while products (or licenses) still belong to it. */
    async remove(principal: Principal, appId: string) {
      try {
        if (!(await store.deleteApp(db, principal.userId, appId))) throw notFound('App');
      } catch (error) {
        if (!isStillReferenced(error)) throw error;
        throw new AppError(
          'app_in_use',
          'This app still has products, licenses or releases; delete or move them first',
        );
      }
      log.info({ appId, userId: principal.userId }, 'app.deleted');
    },
  };
}

export function toApp(row: AppRow) {
  return {
    id: row.id,
    userId: row.user_id,
    name: row.name,
    description: row.description,
    tokenAlgorithm: row.token_algorithm,
    clientAddresses: row.client_addresses,
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  };
}
