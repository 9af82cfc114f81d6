import type { Clock } from '../../platform/clock.js';
import type { Db } from '../../platform/db/database.js';
import type { WebhookEndpointRow } from '../../platform/db/schema.js';
import { AppError, invalidField, notFound } from '../../platform/errors.js';
import { type IdempotentAnswer, transactionWithAnswer } from '../../platform/http/idempotency.js';
import { apiKeyAppId, type Principal, visibleTo } from '../../platform/http/principal.js';
import { iso, isoOrNull } from '../../platform/http/schemas.js';
import type { Log } from '../../platform/log.js';
import type { AppService } from '../apps/index.js';
import { envelopeOf } from './envelope.js';
import type { WebhookResource } from './schemas.js';
import type { Sender } from './sender.js';
import * as store from './store.js';
import { refuseUrl, type TargetPolicy } from './target-guard.js';
import { generateWebhookSecret } from './webhook-signature.js';

export interface WebhookServiceDeps {
  db: Db;
  clock: Clock;
  log: Log;
  sender: Sender;
  policy: TargetPolicy;
  apps: Pick<AppService, 'requireOwnedApp'>;
}

/** What a test send carries: a sample in the shape of a license event, clearly marked. */
const TEST_EVENT_TYPE = 'webhook.test';

export type WebhookService = ReturnType<typeof createWebhookService>;

export function createWebhookService({ db, clock, log, sender, policy, apps }: WebhookServiceDeps) {
  /** The seller's endpoint; an API key sees only endpoints bound to its app. */
  async function requireEndpoint(principal: Principal, id: string): Promise<WebhookEndpointRow> {
    return visibleTo(principal, await store.findEndpoint(db, principal.userId, id), 'Webhook');
  }

  function checkUrl(url: string): string {
    const refused = refuseUrl(url, policy);
    if (refused) throw invalidField('url', refused);
    return url;
  }

  /** A merchant endpoint addressed through its product, which the seller (or key) must own. */
  async function requireMerchantTarget(principal: Principal, productId: string) {
    return visibleTo(principal, await store.findMerchantTarget(db, principal.userId, productId), 'Product');
  }

  /** Sends one delivery now (test or redeliver), logs it, and never schedules a retry. */
  async function sendNow(
    target: Target,
    delivery: Awaited<ReturnType<typeof store.insertDelivery>>,
    trigger: 'test' | 'manual',
  ) {
    const result = await sender.send(
      target.url,
      target.secret,
      envelopeOf(delivery, target.secret),
      target.kind,
    );
    const at = clock.now();
    await store.recordAttempt(
      db,
      {
        deliveryId: delivery.id,
        endpointId: target.endpointId,
        attempt: delivery.attempts,
        trigger,
        ...result,
        at,
      },
      // A failed manual resend leaves the delivery as it stands now: a worker may hold it, and
      // what this request read before sending may be stale (it must not reopen a success).
      result.success || trigger === 'test'
        ? { status: result.success ? 'succeeded' : 'failed', retryAt: null, leasedUntil: null }
        : null,
    );
    log.info(
      { endpointId: target.endpointId, deliveryId: delivery.id, trigger, statusCode: result.statusCode },
      'webhook.delivery.sent',
    );
    return {
      deliveryId: delivery.id,
      success: result.success,
      statusCode: result.statusCode,
      responseBody: result.responseBody,
      durationMs: result.durationMs,
      error: result.error,
    };
  }

  async function attemptLogs(endpointId: string, page: store.PageByNumber) {
    const { rows, total } = await store.listAttempts(db, endpointId, page);
    return {
      logs: rows.map((row) => ({
        id: row.id,
        deliveryId: row.delivery_id,
        eventId: row.event_id,
        eventType: row.event_type,
        attempt: row.attempt,
        trigger: row.trigger,
        statusCode: row.status_code,
        responseBody: row.response_body,
        success: row.success,
        durationMs: row.duration_ms,
        error: row.error,
        createdAt: iso(row.created_at),
      })),
      total,
      ...page,
    };
  }

  return {
    async create(
      principal: Principal,
      input: { url: string; events: string[]; secret?: string; appId?: string },
      answer?: IdempotentAnswer<WebhookResource & { secret: string }>,
    ) {
      const appId = input.appId ?? apiKeyAppId(principal);
      if (appId) await apps.requireOwnedApp(principal, appId);
      const secret = input.secret ?? generateWebhookSecret();
      const url = checkUrl(input.url);
      const created = await transactionWithAnswer(db, answer, async (trx) => {
        const row = await store.insertEndpoint(trx, {
          userId: principal.userId,
          appId,
          url,
          events: input.events,
          secret,
          now: clock.now(),
        });
        return { ...toWebhook(row), secret };
      });
      log.info({ endpointId: created.id }, 'webhook.endpoint.created');
      return created;
    },

    async list(principal: Principal, page: store.PageByNumber) {
      const { rows, total } = await store.listEndpoints(db, principal.userId, apiKeyAppId(principal), page);
      return { webhooks: rows.map(toWebhook), total, ...page };
    },

    get: async (principal: Principal, id: string) => toWebhook(await requireEndpoint(principal, id)),

    async update(principal: Principal, id: string, input: { url: string; events: string[] }) {
      await requireEndpoint(principal, id);
      const row = await store.updateEndpoint(db, id, {
        url: checkUrl(input.url),
        events: input.events,
        now: clock.now(),
      });
      if (!row) throw notFound('Webhook');
      return toWebhook(row);
    },

    async remove(principal: Principal, id: string) {
      await requireEndpoint(principal, id);
      await store.deleteEndpoint(db, principal.userId, id);
      log.info({ endpointId: id }, 'webhook.endpoint.deleted');
    },

    async setEnabled(principal: Principal, id: string, enabled: boolean) {
      await requireEndpoint(principal, id);
      const row = await store.setEndpointEnabled(
        db,
        id,
        enabled,
        enabled ? null : 'disabled by the seller',
        clock.now(),
      );
      if (!row) throw notFound('Webhook');
      return toWebhook(row);
    },

    async rotateSecret(principal: Principal, id: string) {
      await requireEndpoint(principal, id);
      const secret = generateWebhookSecret();
      await store.updateEndpoint(db, id, { secret, now: clock.now() });
      log.info({ endpointId: id }, 'webhook.endpoint.secret_rotated');
      return { id, secret };
    },

    async sendTest(principal: Principal, id: string) {
      const endpoint = await requireEndpoint(principal, id);
      const now = clock.now();
      const delivery = await store.insertDelivery(db, {
        endpointId: endpoint.id,
        eventType: TEST_EVENT_TYPE,
        payload: {
          test: true,
          id: '00000000-0000-0000-0000-000000000000',
          licenseKey: 'TEST0-TEST0-TEST0-TEST0-TEST0-TEST0',
          userId: principal.userId,
          productId: null,
          status: 'active',
          expiresAt: null,
          createdAt: now.toISOString(),
        },
        eventTime: now,
        trigger: 'test',
        now,
      });
      return sendNow(coreTarget(endpoint), delivery, 'test');
    },

    async redeliver(principal: Principal, id: string, deliveryId: string) {
      const endpoint = await requireEndpoint(principal, id);
      const delivery = await store.findDelivery(db, endpoint.id, deliveryId);
      if (!delivery) throw notFound('Delivery');
      const attempts = await store.bumpAttempts(db, delivery.id);
      return sendNow(coreTarget(endpoint), { ...delivery, attempts }, 'manual');
    },

    async logs(principal: Principal, id: string, page: store.PageByNumber) {
      const endpoint = await requireEndpoint(principal, id);
      return attemptLogs(endpoint.id, page);
    },

    /** A product's merchant webhook attempts; none before its first merchant event. */
    async merchantLogs(principal: Principal, productId: string, page: store.PageByNumber) {
      const target = await requireMerchantTarget(principal, productId);
      return target.endpoint_id ? attemptLogs(target.endpoint_id, page) : { logs: [], total: 0, ...page };
    },

    /** Sends a merchant delivery again, to the product's current URL with its current secret. */
    async redeliverMerchant(principal: Principal, productId: string, deliveryId: string) {
      const target = await requireMerchantTarget(principal, productId);
      const delivery = target.endpoint_id
        ? await store.findDelivery(db, target.endpoint_id, deliveryId)
        : undefined;
      if (!target.endpoint_id || !delivery) throw notFound('Delivery');
      if (!target.url)
        throw new AppError('conflict', 'The product has no merchantWebhookUrl; set one to redeliver');
      const attempts = await store.bumpAttempts(db, delivery.id);
      return sendNow(
        { endpointId: target.endpoint_id, url: target.url, secret: target.secret, kind: 'merchant' },
        { ...delivery, attempts },
        'manual',
      );
    },
  };
}

/** Where and how a delivery goes: the endpoint's own URL and secret, or its product's. */
interface Target {
  endpointId: string;
  url: string;
  secret: string;
  kind: 'core' | 'merchant';
}

function coreTarget(endpoint: WebhookEndpointRow): Target {
  return { endpointId: endpoint.id, url: endpoint.url, secret: endpoint.secret, kind: 'core' };
}

function toWebhook(row: WebhookEndpointRow): WebhookResource {
  return {
    id: row.id,
    url: row.url,
    events: row.events,
    appId: row.app_id,
    enabled: row.enabled,
    status: !row.enabled ? 'disabled' : row.consecutive_failures > 0 ? 'failing' : 'active',
    disabledReason: row.disabled_reason,
    consecutiveFailures: row.consecutive_failures,
    lastSuccessAt: isoOrNull(row.last_success_at),
    lastFailureAt: isoOrNull(row.last_failure_at),
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  };
}
