import type { Clock } from '../../platform/clock.js';
import type { Db } from '../../platform/db/database.js';
import { isStillReferenced } from '../../platform/db/errors.js';
import type { AppRow } from '../../platform/db/schema.js';
import { AppError, notFound } from '../../platform/errors.js';
import { type IdempotentAnswer, transactionWithAnswer } from '../../platform/http/idempotency.js';
import { apiKeyAppId, type Principal } from '../../platform/http/principal.js';
import { iso, type Page } from '../../platform/http/schemas.js';
import { newId } from '../../platform/ids.js';
import type { Log } from '../../platform/log.js';
import { recordEvent } from '../events/index.js';
import * as store from './store.js';

export interface AppServiceDeps {
  db: Db;
  clock: Clock;
  log: Log;
}

export type AppService = ReturnType<typeof createAppService>;

export function createAppService({ db, clock, log }: AppServiceDeps) {
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

    async create(
      principal: Principal,
      input: { name: string; description?: string },
      answer?: IdempotentAnswer<ReturnType<typeof toApp>>,
    ) {
      const now = clock.now();
      const app = await transactionWithAnswer(db, answer, async (trx) => {
        const row = await store.insertApp(trx, {
          id: newId(),
          userId: principal.userId,
          name: input.name.trim(),
          description: input.description?.trim() ?? '',
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

    async update(principal: Principal, appId: string, changes: { name?: string; description?: string }) {
      const row = await store.updateApp(db, principal.userId, appId, {
        name: changes.name?.trim(),
        description: changes.description?.trim(),
        now: clock.now(),
      });
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
          'This app still has products or licenses; delete or move them first',
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
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  };
}
