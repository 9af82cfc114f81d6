import Type, { type Static } from 'typebox';
import { Nullable, NullableTimestamp, Timestamp, Uuid } from '../../platform/http/schemas.js';
import { EVENT_TYPES } from '../events/index.js';

const EventList = Type.Array(Type.Enum(EVENT_TYPES), {
  minItems: 1,
  uniqueItems: true,
  errorMessage: `must be a non-empty list of distinct event kinds: ${EVENT_TYPES.join(', ')}`,
});
const Url = Type.String({ minLength: 1, maxLength: 2000 });
const Secret = Type.String({
  minLength: 16,
  maxLength: 256,
  pattern: '^[\\x21-\\x7e]+$',
  errorMessage: 'must be 16 to 256 printable characters without spaces',
});

export const Webhook = Type.Object({
  id: Uuid,
  url: Type.String(),
  events: Type.Array(Type.String()),
  appId: Nullable(Uuid),
  enabled: Type.Boolean(),
  status: Type.Enum(['active', 'failing', 'disabled']),
  disabledReason: Nullable(Type.String()),
  consecutiveFailures: Type.Integer(),
  lastSuccessAt: NullableTimestamp,
  lastFailureAt: NullableTimestamp,
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type WebhookResource = Static<typeof Webhook>;
export const WebhookWithSecret = Type.Object({ ...Webhook.properties, secret: Type.String() });

export const WebhookCreate = Type.Object(
  { url: Url, events: EventList, secret: Type.Optional(Secret), appId: Type.Optional(Uuid) },
  { additionalProperties: false },
);
export const WebhookUpdate = Type.Object({ url: Url, events: EventList }, { additionalProperties: false });
export const WebhookParams = Type.Object({ id: Uuid }, { additionalProperties: false });
export const DeliveryParams = Type.Object({ id: Uuid, deliveryId: Uuid }, { additionalProperties: false });

export const PageNumberQuery = Type.Object(
  {
    page: Type.Integer({ minimum: 1, maximum: 100_000, default: 1 }),
    limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
  },
  { additionalProperties: false },
);

export const WebhookList = Type.Object({
  webhooks: Type.Array(Webhook),
  total: Type.Integer(),
  page: Type.Integer(),
  limit: Type.Integer(),
});

export const AttemptLog = Type.Object({
  id: Uuid,
  deliveryId: Uuid,
  eventId: Nullable(Uuid),
  eventType: Type.String(),
  attempt: Type.Integer(),
  trigger: Type.Enum(['auto', 'manual', 'test']),
  statusCode: Type.Integer(),
  responseBody: Type.String(),
  success: Type.Boolean(),
  durationMs: Type.Integer(),
  error: Nullable(Type.String()),
  createdAt: Timestamp,
});
export const AttemptLogList = Type.Object({
  logs: Type.Array(AttemptLog),
  total: Type.Integer(),
  page: Type.Integer(),
  limit: Type.Integer(),
});

/** The outcome of a send made during the request (test and redeliver). */
export const SendOutcome = Type.Object({
  deliveryId: Uuid,
  success: Type.Boolean(),
  statusCode: Type.Integer(),
  responseBody: Type.String(),
  durationMs: Type.Integer(),
  error: Nullable(Type.String()),
});
export const RotatedSecret = Type.Object({ id: Uuid, secret: Type.String() });
