import Type from 'typebox';
import { Timestamp, Uuid } from '../../platform/http/schemas.js';
import { EVENT_DATA, EVENT_TYPES } from '../events/index.js';

/*
 * The core API document's `webhooks` (OpenAPI 3.1): what each kind of event an endpoint can
 * subscribe to looks like when it arrives, built from the schemas recordEvent holds each payload
 * to, so a generated client types the deliveries it receives.
 */

const HEADERS: { name: string; description: string }[] = [
  { name: 'webhook-id', description: 'Standard Webhooks: the event id, the same on every attempt' },
  { name: 'webhook-timestamp', description: 'Standard Webhooks: when this attempt was sent, Unix seconds' },
  {
    name: 'webhook-signature',
    description:
      'Standard Webhooks: `v1,` + base64 HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{raw body}`, keyed with the base64-decoded part of the `whsec_` secret',
  },
  { name: 'X-Webhook-Id', description: 'The event id (as webhook-id)' },
  { name: 'X-Webhook-Timestamp', description: 'When this attempt was sent, Unix seconds' },
  {
    name: 'X-Webhook-Signature',
    description: '`sha256=` + hex HMAC-SHA256 of the raw body, keyed with the secret’s UTF-8 bytes',
  },
];

/** The body of a delivery of `type`: the envelope every core event arrives in. */
function envelopeOf(type: string, data: object) {
  return Type.Object(
    {
      id: { ...Uuid, description: 'The event’s id: the same on every attempt; process each once' },
      type: Type.Literal(type),
      data,
      timestamp: { ...Timestamp, description: 'When the event happened' },
      signature: Type.String({
        description: 'Hex HMAC-SHA256 of `{id}.{timestamp}.{JSON of data}`, keyed with the secret',
      }),
    },
    { description: `The ${type} envelope` },
  );
}

/** One Path Item per subscribable event kind, keyed by its name, as OpenAPI 3.1 `webhooks` are. */
export function webhookReference(): Record<string, object> {
  return Object.fromEntries(
    EVENT_TYPES.map((type) => {
      const { schema, when } = EVENT_DATA[type];
      return [
        type,
        {
          post: {
            summary: when,
            description:
              'Sent to each of the seller’s webhook endpoints subscribed to this kind (an endpoint bound to an app hears only that app’s), signed with the endpoint’s secret; retried with backoff until it answers 2xx.',
            tags: ['events'],
            parameters: HEADERS.map(({ name, description }) => ({
              name,
              in: 'header',
              required: true,
              description,
              schema: { type: 'string' },
            })),
            requestBody: {
              required: true,
              content: { 'application/json': { schema: envelopeOf(type, schema) } },
            },
            responses: {
              '2XX': { description: 'Received: any 2xx within 5 seconds counts as delivered' },
              default: {
                description:
                  'Anything else, or no answer within 5 seconds: the delivery is tried again later (410 Gone switches the endpoint off)',
              },
            },
          },
        },
      ];
    }),
  );
}
