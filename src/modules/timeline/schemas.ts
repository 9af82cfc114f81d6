import Type, { type Static } from 'typebox';
import { Nullable, Timestamp, Uuid } from '../../platform/http/schemas.js';

/**
 * Every kind of entry a license's timeline holds (docs/licenses.md#license-timeline says when
 * each is written).
 */
export const TIMELINE_TYPES = [
  'verification',
  'device.activated',
  'device.released',
  'seat.acquired',
  'seat.released',
  'seat.lapsed',
  'usage.consumed',
  'check_in',
  'license_file.issued',
  'license.created',
  'license.updated',
  'license.key_regenerated',
  'license.suspended',
  'license.reinstated',
  'license.revoked',
  'license.expired',
  'license.renewed',
  'email.sent',
  'email.failed',
  'webhook.event',
  'webhook.failed',
] as const;

export type TimelineType = (typeof TIMELINE_TYPES)[number];

export const DEFAULT_TIMELINE_PAGE = 50;
export const MAX_TIMELINE_PAGE = 200;

const TYPE_NAME = TIMELINE_TYPES.map((type) => type.replace('.', '\\.')).join('|');

export const TimelineQuery = Type.Object(
  {
    cursor: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        description: 'The `nextCursor` of the previous page, as it was answered',
      }),
    ),
    limit: Type.Integer({ minimum: 1, maximum: MAX_TIMELINE_PAGE, default: DEFAULT_TIMELINE_PAGE }),
    type: Type.Optional(
      Type.String({
        pattern: `^(${TYPE_NAME})(,(${TYPE_NAME}))*$`,
        description: 'Only entries of these types, separated by commas (`verification,license.suspended`)',
        errorMessage: `must be one or more of ${TIMELINE_TYPES.join(', ')}, separated by commas`,
      }),
    ),
    outcome: Type.Optional(
      Type.Enum(['failure'], {
        description: 'Only refused verifications and failed deliveries (e-mails, webhooks)',
      }),
    ),
  },
  { additionalProperties: false },
);

export type TimelineQueryType = Static<typeof TimelineQuery>;

const Actor = Type.Object(
  {
    kind: Type.Enum(['seller', 'api_key', 'buyer', 'billing', 'system']),
    id: Nullable(
      Type.String({
        description: 'The seller’s user id, the API key’s id; null for buyer, billing and system',
      }),
    ),
  },
  { description: 'Who made the change' },
);

export const TimelineEntry = Type.Object({
  id: Uuid,
  type: Type.Enum(TIMELINE_TYPES),
  outcome: Nullable(
    Type.String({
      description:
        'A verification’s answer: `valid` or its refusal code (`license_suspended`, `device_limit_reached`…); `failed` for a failed delivery; null otherwise',
    }),
  ),
  hwuid: Nullable(Type.String({ description: 'The device, when the entry concerns one' })),
  clientAddress: Nullable(
    Type.String({
      description:
        'Where the client called from, as the app’s clientAddresses setting kept it: whole, its network (`203.0.113.0/24`, `2001:db8:1::/48`) or null',
    }),
  ),
  appVersion: Nullable(Type.String({ description: 'The X-App-Version header the client sent' })),
  actor: Nullable(Actor),
  data: Type.Record(Type.String(), Type.Unknown(), {
    description: 'What else the entry says, by type (docs/licenses.md#license-timeline)',
  }),
  occurredAt: Timestamp,
  repeats: Type.Integer({
    minimum: 1,
    description:
      'How many identical calls this entry stands for: a client that gets the same answer again and again within one write of its node’s buffer (10 s by default) makes one entry, from occurredAt to lastOccurredAt',
  }),
  lastOccurredAt: Nullable(
    Type.String({
      format: 'date-time',
      description: 'The last of the repeated calls; null when the entry is one call',
    }),
  ),
});

export type TimelineEntryType = Static<typeof TimelineEntry>;

export const TimelinePage = Type.Object({
  events: Type.Array(TimelineEntry),
  nextCursor: Nullable(Type.String({ description: 'Pass as `cursor` for the next page; null at the end' })),
});

/** The X-App-Version header client software may send with its calls (recorded in the timeline). */
export const AppVersionHeader = Type.Object({
  'x-app-version': Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 64,
      pattern: '^[\\x21-\\x7e]+$',
      description: 'The calling software’s version (`2.4.1`), kept in the license’s timeline',
      errorMessage: 'must be 1 to 64 visible ASCII characters',
    }),
  ),
});

export const TimelineParams = Type.Object({ appId: Uuid, licenseId: Uuid }, { additionalProperties: false });
