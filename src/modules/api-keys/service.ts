import type { Clock } from '../../platform/clock.js';
import type { Db } from '../../platform/db/database.js';
import type { ApiKeyRow } from '../../platform/db/schema.js';
import { notFound } from '../../platform/errors.js';
import { type IdempotentAnswer, transactionWithAnswer } from '../../platform/http/idempotency.js';
import type { Principal } from '../../platform/http/principal.js';
import { iso, isoOrNull, type Page } from '../../platform/http/schemas.js';
import { newId } from '../../platform/ids.js';
import type { Log } from '../../platform/log.js';
import type { AppService } from '../apps/index.js';
import { generateApiKey, hashApiKey, looksLikeApiKey } from './api-key.js';
import * as store from './store.js';

export interface ApiKeyServiceDeps {
  db: Db;
  clock: Clock;
  log: Log;
  apps: Pick<AppService, 'requireOwnedApp'>;
}

// last_used_at is advisory; writing it at most once a minute keeps authenticated calls read-only.
const LAST_USED_RESOLUTION_MS = 60_000;

export type ApiKeyService = ReturnType<typeof createApiKeyService>;

export function createApiKeyService({ db, clock, log, apps }: ApiKeyServiceDeps) {
  return {
    async create(
      principal: Principal,
      appId: string,
      input: { name: string },
      answer?: IdempotentAnswer<ReturnType<typeof toApiKey> & { key: string }>,
    ) {
      const app = await apps.requireOwnedApp(principal, appId);
      const { key, prefix, hash } = generateApiKey();
      const created = await transactionWithAnswer(db, answer, async (trx) => {
        const row = await store.insertApiKey(trx, {
          id: newId(),
          userId: app.user_id,
          appId: app.id,
          name: input.name.trim(),
          prefix,
          hash,
          now: clock.now(),
        });
        return { ...toApiKey(row), key };
      });
      log.info({ apiKeyId: created.id, appId: app.id }, 'api_key.created');
      return created;
    },

    async list(principal: Principal, appId: string, page: Page) {
      const app = await apps.requireOwnedApp(principal, appId);
      const { rows, total } = await store.listApiKeys(db, app.id, page);
      return { apiKeys: rows.map(toApiKey), total, ...page };
    },

    async revoke(principal: Principal, appId: string, keyId: string) {
      const app = await apps.requireOwnedApp(principal, appId);
      const row = await store.revokeApiKey(db, app.id, keyId, clock.now());
      if (!row) throw notFound('API key');
      log.info({ apiKeyId: row.id, appId: app.id }, 'api_key.revoked');
    },

    /** The principal an API key acts as, or null for an unknown or revoked key. */
    async authenticate(token: string): Promise<Principal | null> {
      if (!looksLikeApiKey(token)) return null;
      const key = await store.findActiveKeyByHash(db, hashApiKey(token));
      if (!key) return null;
      const now = clock.now();
      if (!key.last_used_at || now.getTime() - key.last_used_at.getTime() >= LAST_USED_RESOLUTION_MS) {
        await store.touchApiKey(db, key.id, now);
      }
      return {
        userId: key.user_id,
        role: key.role,
        tier: key.tier,
        credential: { kind: 'api_key', apiKeyId: key.id, appId: key.app_id },
      };
    },
  };
}

function toApiKey(row: ApiKeyRow) {
  return {
    id: row.id,
    appId: row.app_id,
    name: row.name,
    prefix: row.prefix,
    createdAt: iso(row.created_at),
    lastUsedAt: isoOrNull(row.last_used_at),
    revokedAt: isoOrNull(row.revoked_at),
  };
}
