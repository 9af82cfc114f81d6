import { Agent, type Dispatcher } from 'undici';
import { MERCHANT_SIGNATURE_HEADER, merchantSignature } from './merchant-signature.js';
import { guardedLookup, refuseUrl, type TargetPolicy } from './target-guard.js';
import { bodySignature, standardSignature } from './webhook-signature.js';

/** The receiver has this long for the whole exchange (connect, send, answer, body). */
export const DELIVERY_TIMEOUT_MS = 5_000;
/**
 * Added to the receiver's 5 s before an attempt is cut off: on a busy node (PGlite runs on the
 * event loop) an answer given just inside the 5 s can be read a little after them, and a
 * receiver that kept to its time must not be counted as timed out, and sent the event again.
 */
export const LOCAL_LAG_ALLOWANCE_MS = 250;
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

export type Sender = ReturnType<typeof createSender>;

/** A target's parts, parsed once: what dispatch needs, or why it is refused. */
type Target = { origin: string; path: string; refused: null } | { refused: string };

/**
 * Sends in flight from one node (the delivery worker's bound). It is also the agent's number of
 * connections to one origin: endpoints of one host (a seller's several endpoints, or products'
 * merchant URLs on one site) may all be sending at once, and a send queued for a connection
 * would spend its 5 s waiting and time out unsent.
 */
export const SENDS_IN_FLIGHT = 64;

/** Targets remembered at most; endpoints are few, so the memo is simply emptied when full. */
const TARGET_MEMO = 1_000;

export function createSender(policy: TargetPolicy, clock: { now(): Date }) {
  // Every connection resolves its host through the guard; redirects are never followed. A
  // connection that cannot be made within the exchange's time is given up with it.
  const agent = new Agent({
    connect: { lookup: guardedLookup(policy) as never, timeout: DELIVERY_TIMEOUT_MS },
    connections: SENDS_IN_FLIGHT,
  });
  const targets = new Map<string, Target>();

  function targetOf(url: string): Target {
    let target = targets.get(url);
    if (target) return target;
    // IP literals and local names never reach the lookup above, so they are checked here.
    const refused = refuseUrl(url, policy);
    if (refused) target = { refused };
    else {
      const parsed = new URL(url);
      target = { origin: parsed.origin, path: `${parsed.pathname}${parsed.search}`, refused: null };
    }
    if (targets.size >= TARGET_MEMO) targets.clear();
    targets.set(url, target);
    return target;
  }

  return {
    /**
     * One attempt. `core` deliveries carry the envelope with its signature field and the
     * X-Webhook-* headers (the endpoint's secret); `merchant` deliveries carry {id, type, data,
     * timestamp} and x-svc-pay-signature (the product's callback secret). The models never mix.
     */
    send(
      url: string,
      secret: string,
      event: OutgoingEvent,
      model: 'core' | 'merchant' = 'core',
    ): Promise<SendResult> {
      const target = targetOf(url);
      if (target.refused !== null)
        return Promise.resolve(unsent(`target refused: non-public address (${target.refused})`));
      const sentAt = Math.floor(clock.now().getTime() / 1000);
      const { signature: _signature, ...unsigned } = event;
      const body = JSON.stringify(model === 'core' ? event : unsigned);
      const headers: Record<string, string> =
        model === 'core'
          ? {
              'content-type': 'application/json',
              'user-agent': USER_AGENT,
              'x-webhook-id': event.id,
              'x-webhook-signature': bodySignature(secret, body),
              'x-webhook-timestamp': String(sentAt),
              'webhook-id': event.id,
              'webhook-timestamp': String(sentAt),
              'webhook-signature': standardSignature(secret, event.id, sentAt, body),
            }
          : {
              'content-type': 'application/json',
              'user-agent': USER_AGENT,
              'x-webhook-id': event.id,
              [MERCHANT_SIGNATURE_HEADER]: merchantSignature(secret, sentAt, body),
            };
      return new Promise((resolve) => {
        const exchange = new Exchange(resolve);
        try {
          agent.dispatch(
            { origin: target.origin, path: target.path, method: 'POST', headers, body },
            exchange,
          );
        } catch (error) {
          exchange.onResponseError(null, error as Error);
        }
      });
    },
    close: () => agent.close(),
  };
}

const USER_AGENT = 'licensing-webhooks/1';

/**
 * One POST through undici's dispatcher interface, which hands over the answer's status, headers
 * and chunks as they come. Its `request()` wraps the same exchange in a readable stream, an
 * async resource and an abort signal per call, which cost the worker more than the exchange.
 * The whole exchange (connect, send, answer, body) has DELIVERY_TIMEOUT_MS (and the local lag
 * allowance): at the deadline the attempt ends as timed out, and the request is cut off, or never
 * written if it had not started.
 */
class Exchange implements Dispatcher.DispatchHandler {
  private readonly started = performance.now();
  private readonly timer: NodeJS.Timeout;
  private controller: Dispatcher.DispatchController | null = null;
  private settled = false;
  private statusCode = 0;
  private retryAfter: string | null = null;
  private readonly chunks: Buffer[] = [];
  private bytes = 0;

  constructor(private readonly resolve: (result: SendResult) => void) {
    this.timer = setTimeout(() => this.timeOut(), DELIVERY_TIMEOUT_MS + LOCAL_LAG_ALLOWANCE_MS);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    // The deadline passed while the request waited for its connection: it is not sent.
    if (this.settled) controller.abort(new Error('the attempt already ended'));
  }

  onResponseStart(
    _controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: Record<string, string | string[] | undefined>,
  ): void {
    this.statusCode = statusCode;
    const retryAfter = headers['retry-after'];
    this.retryAfter = typeof retryAfter === 'string' ? retryAfter : null;
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.settled) return;
    this.chunks.push(chunk);
    this.bytes += chunk.length;
    // RESPONSE_BODY_LIMIT characters are at most four bytes each; the rest is not read (cutting
    // the answer short drops its connection).
    if (this.bytes < 4 * RESPONSE_BODY_LIMIT) return;
    this.answered();
    controller.abort(new Error('the rest of the answer is not read'));
  }

  onResponseEnd(): void {
    this.answered();
  }

  onResponseError(_controller: Dispatcher.DispatchController | null, error: Error): void {
    if (this.settled) return;
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    const code = (error as { code?: string }).code ?? cause?.code;
    this.finish({
      ...unsent(`${code ?? 'network error'}: ${cause?.message ?? error.message}`),
      durationMs: this.elapsed(),
    });
  }

  private answered(): void {
    if (this.settled) return;
    const { statusCode } = this;
    const text =
      this.chunks.length === 1
        ? (this.chunks[0] as Buffer).toString()
        : Buffer.concat(this.chunks).toString();
    this.finish({
      statusCode,
      success: statusCode >= 200 && statusCode < 300,
      responseBody: text.length > RESPONSE_BODY_LIMIT ? text.slice(0, RESPONSE_BODY_LIMIT) : text,
      durationMs: this.elapsed(),
      timedOut: false,
      retryAfter: this.retryAfter,
      error: statusCode >= 300 && statusCode < 400 ? 'redirects are not followed' : null,
    });
  }

  /**
   * The deadline's timer runs before the turn reads its sockets: an answer that arrived while
   * this node was stalled is read first (setImmediate runs after that I/O), and only an attempt
   * still unanswered then has timed out.
   */
  private timeOut(): void {
    if (!this.settled) setImmediate(() => this.timedOut());
  }

  private timedOut(): void {
    if (this.settled) return;
    this.finish({
      ...unsent(`no complete answer within ${DELIVERY_TIMEOUT_MS} ms`),
      durationMs: this.elapsed(),
      timedOut: true,
    });
    this.controller?.abort(new Error('timed out'));
  }

  private finish(result: SendResult): void {
    this.settled = true;
    clearTimeout(this.timer);
    this.resolve(result);
  }

  private elapsed(): number {
    return Math.round(performance.now() - this.started);
  }
}
