import type { Readable } from 'node:stream';
import { Agent, request } from 'undici';
import { MERCHANT_SIGNATURE_HEADER, merchantSignature } from './merchant-signature.js';
import { guardedLookup, refuseUrl, type TargetPolicy } from './target-guard.js';
import { bodySignature, standardSignature } from './webhook-signature.js';

/** The receiver has this long for the whole exchange (connect, send, answer, body). */
export const DELIVERY_TIMEOUT_MS = 5_000;
/** How much of a receiver's answer is read and logged. */
export const RESPONSE_BODY_LIMIT = 4_096;

export interface SendResult {
  /** 0 when no HTTP answer came. */
  statusCode: number;
  success: boolean;
  responseBody: string;
  durationMs: number;
  timedOut: boolean;
  retryAfter: string | null;
  error: string | null;
}

export interface OutgoingEvent {
  id: string;
  type: string;
  data: Record<string, unknown>;
  /** The envelope timestamp (ISO 8601). */
  timestamp: string;
  /** The envelope signature field. */
  signature: string;
}

/** An attempt that never reached the receiver, for the reason given. */
export function unsent(error: string): SendResult {
  return {
    statusCode: 0,
    success: false,
    responseBody: '',
    durationMs: 0,
    timedOut: false,
    retryAfter: null,
    error,
  };
}

/**
 * The first `limit` characters of an answer's body; the rest is not read. Listens for chunks
 * rather than iterating the stream: an async iterator per delivery cost more than the read.
 */
function readUpTo(body: Readable, limit: number): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    const done = () => {
      // Destroying a body not read to its end fails it (and drops its connection): the error
      // listener stays, so that failure lands in an already settled promise.
      body.off('data', onData).off('end', done);
      body.destroy();
      resolve(text.slice(0, limit));
    };
    const onData = (chunk: Buffer) => {
      text += chunk.toString();
      if (text.length >= limit) done();
    };
    body.on('data', onData).once('end', done).on('error', reject);
  });
}

export type Sender = ReturnType<typeof createSender>;

export function createSender(policy: TargetPolicy, clock: { now(): Date }) {
  // Every connection resolves its host through the guard; redirects are never followed.
  const agent = new Agent({ connect: { lookup: guardedLookup(policy) as never }, connections: 20 });

  return {
    /**
     * One attempt. `core` deliveries carry the envelope with its signature field and the
     * X-Webhook-* headers (the endpoint's secret); `merchant` deliveries carry {id, type, data,
     * timestamp} and x-svc-pay-signature (the product's callback secret). The models never mix.
     */
    async send(
      url: string,
      secret: string,
      event: OutgoingEvent,
      model: 'core' | 'merchant' = 'core',
    ): Promise<SendResult> {
      const sentAt = Math.floor(clock.now().getTime() / 1000);
      const { signature: _signature, ...unsigned } = event;
      const body = JSON.stringify(model === 'core' ? event : unsigned);
      const signatureHeaders: Record<string, string> =
        model === 'core'
          ? {
              'x-webhook-signature': bodySignature(secret, body),
              'x-webhook-timestamp': String(sentAt),
              'webhook-id': event.id,
              'webhook-timestamp': String(sentAt),
              'webhook-signature': standardSignature(secret, event.id, sentAt, body),
            }
          : { [MERCHANT_SIGNATURE_HEADER]: merchantSignature(secret, sentAt, body) };
      const started = performance.now();
      const elapsed = () => Math.round(performance.now() - started);
      // IP literals and local names never reach the lookup below, so they are checked here.
      const refused = refuseUrl(url, policy);
      if (refused) return unsent(`target refused: non-public address (${refused})`);
      // A plain timer rather than AbortSignal.timeout, whose weak timer and finalization
      // registry cost more per delivery than the abort it guards.
      const aborter = new AbortController();
      const { signal } = aborter;
      const timer = setTimeout(() => aborter.abort(), DELIVERY_TIMEOUT_MS);
      try {
        const res = await request(url, {
          method: 'POST',
          dispatcher: agent,
          signal,
          headers: {
            'content-type': 'application/json',
            'user-agent': 'licensing-webhooks/1',
            'x-webhook-id': event.id,
            ...signatureHeaders,
          },
          body,
        });
        const text = await readUpTo(res.body, RESPONSE_BODY_LIMIT);
        const retryAfter = res.headers['retry-after'];
        return {
          statusCode: res.statusCode,
          success: res.statusCode >= 200 && res.statusCode < 300,
          responseBody: text.slice(0, RESPONSE_BODY_LIMIT),
          durationMs: elapsed(),
          timedOut: false,
          retryAfter: typeof retryAfter === 'string' ? retryAfter : null,
          error: res.statusCode >= 300 && res.statusCode < 400 ? 'redirects are not followed' : null,
        };
      } catch (error) {
        const timedOut = signal.aborted;
        const cause = (error as { cause?: { code?: string; message?: string } }).cause;
        const code = (error as { code?: string }).code ?? cause?.code;
        return {
          statusCode: 0,
          success: false,
          responseBody: '',
          durationMs: elapsed(),
          timedOut,
          retryAfter: null,
          error: timedOut
            ? `no complete answer within ${DELIVERY_TIMEOUT_MS} ms`
            : `${code ?? 'network error'}: ${cause?.message ?? (error as Error).message}`,
        };
      } finally {
        clearTimeout(timer);
      }
    },
    close: () => agent.close(),
  };
}
