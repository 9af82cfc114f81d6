import { WEBHOOK_LEEWAY } from './case-terms.js';
import type { Delivery } from './issued.js';
import type { Vector } from './vectors.js';

/** A webhook delivery: the rules of webhooks.ts written out. */
export function webhookVectors(delivery: Delivery): Vector[] {
  const { body, headers, secret } = delivery;
  const sentAt = Number(headers['x-webhook-timestamp']);
  const envelope = JSON.parse(body) as { id: string; type: string };
  const base = { kind: 'webhook', keys: { secret } } as const;
  const name = (what: string) => `webhook: ${what}`;
  const valid = { valid: true as const, claims: { id: envelope.id, type: envelope.type } };
  const refused = (error: string) => ({ valid: false as const, error });
  const without = (header: string) =>
    Object.fromEntries(Object.entries(headers).filter(([key]) => key !== header));
  const signature = headers['x-webhook-signature'] ?? '';
  return [
    {
      ...base,
      name: name('as delivered'),
      input: { body, headers },
      context: { now: sentAt },
      expect: valid,
    },
    {
      ...base,
      name: name('signature without its sha256= prefix'),
      input: { body, headers: { ...headers, 'x-webhook-signature': signature.replace(/^sha256=/, '') } },
      context: { now: sentAt },
      expect: valid,
    },
    {
      ...base,
      name: name('body changed'),
      input: { body: body.replace(envelope.id, `${envelope.id}x`), headers },
      context: { now: sentAt },
      expect: refused('bad_signature'),
    },
    {
      ...base,
      name: name('another secret'),
      input: { body, headers },
      keys: { secret: `${secret}x` },
      context: { now: sentAt },
      expect: refused('bad_signature'),
    },
    {
      ...base,
      name: name('no signature header'),
      input: { body, headers: without('x-webhook-signature') },
      context: { now: sentAt },
      expect: refused('malformed'),
    },
    {
      ...base,
      name: name('no timestamp header'),
      input: { body, headers: without('x-webhook-timestamp') },
      context: { now: sentAt },
      expect: refused('malformed'),
    },
    {
      ...base,
      name: name('timestamp not a number'),
      input: { body, headers: { ...headers, 'x-webhook-timestamp': `${sentAt}.5` } },
      context: { now: sentAt },
      expect: refused('malformed'),
    },
    {
      ...base,
      name: name('too old'),
      input: { body, headers },
      context: { now: sentAt + WEBHOOK_LEEWAY + 1 },
      expect: refused('stale_timestamp'),
    },
    {
      ...base,
      name: name('old, inside the tolerance'),
      input: { body, headers },
      context: { now: sentAt + WEBHOOK_LEEWAY },
      expect: valid,
    },
    {
      ...base,
      name: name('from the future'),
      input: { body, headers },
      context: { now: sentAt - WEBHOOK_LEEWAY - 1 },
      expect: refused('stale_timestamp'),
    },
    {
      ...base,
      name: name('signed, but not JSON'),
      input: {
        body: 'not json',
        headers: { ...headers, 'x-webhook-signature': delivery.signBody('not json') },
      },
      context: { now: sentAt },
      expect: refused('malformed'),
    },
  ];
}
