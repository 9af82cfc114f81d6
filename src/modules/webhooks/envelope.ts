import type { WebhookDeliveryRow } from '../../platform/db/schema.js';
import type { OutgoingEvent } from './sender.js';
import { envelopeSignature } from './webhook-signature.js';

/**
 * The body of every delivery: {id, type, data, timestamp, signature}. The id is the event's id
 * (the delivery's own id for test sends), the same on every attempt so receivers de-duplicate.
 */
export function envelopeOf(delivery: WebhookDeliveryRow, secret: string): OutgoingEvent {
  const id = delivery.event_id ?? delivery.id;
  const timestamp = delivery.event_time.toISOString();
  const data = delivery.payload;
  return {
    id,
    type: delivery.event_type,
    data,
    timestamp,
    signature: envelopeSignature(secret, id, timestamp, data),
  };
}
