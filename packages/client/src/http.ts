import { LicensingApiError } from './errors.js';
import { responseInfoFor } from './response-info.js';

interface ErrorBody {
  error?: {
    code?: string;
    message?: string;
    requestId?: string;
    details?: { field: string; message: string }[];
  };
}

/**
 * How a call may be repeated when its answer is lost or refused:
 * - `repeatable`: repeating it changes nothing (GET, PUT, verify, introspect), so it is retried freely;
 * - `keyed`: a creating POST; retried only because every attempt carries the same Idempotency-Key,
 *   so the service does the work once and replays its first answer;
 * - `once`: anything else (a state change without a key): retried only on 429 and 503, answers the
 *   service gives before doing any work.
 */
export type RetryClass = 'repeatable' | 'keyed' | 'once';

export interface RetryOptions {
  /** Retries after the first attempt; 0 turns retrying off. Default 2 (three attempts in all). */
  retries?: number;
  /** The first backoff step; each retry doubles it, with jitter. Default 500 ms. */
  retryDelayMs?: number;
  /** The longest wait before a retry. A Retry-After longer than this is not waited for. Default 20 s. */
  maxRetryDelayMs?: number;
  /** How long one attempt may take before it counts as a network failure. Default 30 s. */
  timeoutMs?: number;
}

/** A body sent as it is (an upload): bytes, a Blob, or a stream of bytes read once. */
export type RawBody =
  | Blob
  | ArrayBuffer
  | ArrayBufferView
  | ReadableStream<Uint8Array>
  | AsyncIterable<Uint8Array>;

export interface RequestSpec {
  method: string;
  url: URL;
  /** Sent as JSON. */
  body?: unknown;
  /** Sent as it is, with its content type, instead of a JSON body. */
  raw?: { body: RawBody; contentType: string };
  /** This call's own limit for one attempt (an upload's), instead of the client's. */
  timeoutMs?: number;
  headers?: Record<string, string>;
  retry: RetryClass;
  /** For `keyed` calls: the caller's own key; otherwise one is made per call. */
  idempotencyKey?: string | undefined;
}

const DEFAULTS = { retries: 2, retryDelayMs: 500, maxRetryDelayMs: 20_000, timeoutMs: 30_000 };

/**
 * Sends one logical JSON request, with retries, and returns the parsed answer. Every non-2xx
 * answer, on either host, becomes a LicensingApiError read from the one error body
 * {"error":{code,message,details,requestId}}; a request that never got an answer becomes one
 * with status 0 and code `network_error`.
 */
export async function requestJson<T>(
  fetchImpl: typeof fetch,
  spec: RequestSpec,
  options: RetryOptions = {},
): Promise<T> {
  // A stream is read as it is sent, so it cannot be sent a second time: no retry.
  const streamed = spec.raw !== undefined && isStream(spec.raw.body);
  const policy = {
    ...DEFAULTS,
    ...definedOnly(options),
    ...(spec.timeoutMs !== undefined ? { timeoutMs: spec.timeoutMs } : {}),
  };
  checkPolicy(policy);
  if (streamed) policy.retries = 0;
  const headers: Record<string, string> = { accept: 'application/json', ...spec.headers };
  if (spec.raw) headers['content-type'] = spec.raw.contentType;
  else if (spec.body !== undefined) headers['content-type'] = 'application/json';
  const idempotencyKey = spec.retry === 'keyed' ? (spec.idempotencyKey ?? newIdempotencyKey()) : undefined;
  if (idempotencyKey !== undefined) headers['idempotency-key'] = idempotencyKey;
  const body = spec.raw ? spec.raw.body : spec.body === undefined ? undefined : JSON.stringify(spec.body);

  for (let attempt = 1; ; attempt++) {
    let res: Response;
    try {
      // A streamed body needs `duplex: 'half'` (fetch's rule for a body sent while it is read).
      res = await fetchImpl(spec.url, {
        method: spec.method,
        headers,
        body: body as RequestInit['body'],
        signal: AbortSignal.timeout(policy.timeoutMs),
        ...(streamed ? { duplex: 'half' } : {}),
      } as RequestInit);
    } catch (cause) {
      // The request may or may not have been done: only calls that are safe to repeat go again.
      if (spec.retry !== 'once' && attempt <= policy.retries) {
        await sleep(backoff(attempt, policy));
        continue;
      }
      throw new LicensingApiError(
        0,
        'network_error',
        `No answer from ${spec.url.origin} after ${attempt} attempt${attempt > 1 ? 's' : ''}: ${describe(cause)}`,
        undefined,
        [],
        { cause },
      );
    }
    const text = await res.text();
    let parsed: ErrorBody | undefined;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    if (res.ok) {
      if (text && parsed === undefined) throw unexpected(res, text);
      const info = {
        status: res.status,
        requestId: res.headers.get('x-request-id') ?? undefined,
        idempotencyKey,
        replayed: res.headers.get('idempotent-replayed') === 'true',
        attempts: attempt,
      };
      return responseInfoFor(parsed, info) as T;
    }

    const error = parsed?.error ?? {};
    const wait = retryWait(res, error.code, spec.retry, attempt, policy);
    if (wait !== null) {
      await sleep(wait);
      continue;
    }
    if (parsed === undefined) throw unexpected(res, text);
    throw new LicensingApiError(
      res.status,
      error.code ?? 'http_error',
      error.message ?? res.statusText,
      error.requestId,
      error.details,
    );
  }
}

/** How long to wait before repeating a refused attempt, or null when it must not be repeated. */
function retryWait(
  res: Response,
  code: string | undefined,
  retry: RetryClass,
  attempt: number,
  policy: typeof DEFAULTS,
): number | null {
  if (attempt > policy.retries) return null;
  const refusedBeforeWork = res.status === 429 || res.status === 503;
  // The first attempt with this key is still running: its answer will be replayed once it is done.
  const keyInUse = res.status === 409 && code === 'idempotency_key_in_use' && retry === 'keyed';
  // A gateway that timed out or failed may have passed the request on: only repeatable calls go again.
  const gateway = (res.status === 502 || res.status === 504) && retry !== 'once';
  if (!refusedBeforeWork && !keyInUse && !gateway) return null;
  const after = retryAfterMs(res.headers.get('retry-after'));
  if (after === null) return backoff(attempt, policy);
  return after <= policy.maxRetryDelayMs ? after : null;
}

/** Exponential backoff with jitter: 0.5 to 1 times base·2^(attempt-1), capped. */
function backoff(attempt: number, policy: typeof DEFAULTS): number {
  const step = Math.min(policy.maxRetryDelayMs, policy.retryDelayMs * 2 ** (attempt - 1));
  return Math.round(step * (0.5 + Math.random() / 2));
}

/** Retry-After as delay-seconds or an HTTP date; null when absent or unreadable. */
function retryAfterMs(header: string | null): number | null {
  if (header === null) return null;
  const value = header.trim();
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, date - Date.now());
}

/** A caller's own Idempotency-Key, checked before anything is sent. */
export function checkedKey(key: string | undefined): string | undefined {
  if (key !== undefined && (typeof key !== 'string' || key.length === 0 || key.length > 255)) {
    throw new TypeError('idempotencyKey: must be a string of 1 to 255 characters');
  }
  return key;
}

/** A fresh key per logical call: globalThis.crypto exists in Node 20, browsers, Deno, Bun and Electron. */
function newIdempotencyKey(): string {
  return globalThis.crypto.randomUUID();
}

function unexpected(res: Response, text: string): LicensingApiError {
  // Not our answer (a proxy's error page, say): report it as such.
  return new LicensingApiError(
    res.status,
    'unexpected_response',
    `HTTP ${res.status}: ${text.slice(0, 200)}`,
    undefined,
  );
}

function checkPolicy(policy: typeof DEFAULTS): void {
  for (const [name, value] of Object.entries(policy)) {
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
      throw new TypeError(`${name}: must be a number of 0 or more (got ${String(value)})`);
    }
  }
  if (!Number.isInteger(policy.retries)) throw new TypeError('retries: must be a whole number');
}

/** The retry settings among a client's options, unset ones left to the defaults. */
function definedOnly(options: RetryOptions): RetryOptions {
  return Object.fromEntries(
    Object.keys(DEFAULTS).flatMap((name) => {
      const value = options[name as keyof RetryOptions];
      return value === undefined ? [] : [[name, value]];
    }),
  );
}

/** Whether a body is read as it goes (a web stream or a Node.js Readable) rather than held whole. */
function isStream(body: RawBody): boolean {
  return (
    (typeof ReadableStream !== 'undefined' && body instanceof ReadableStream) ||
    typeof (body as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] === 'function'
  );
}

function describe(cause: unknown): string {
  if (!(cause instanceof Error)) return String(cause);
  const inner = cause.cause instanceof Error ? `: ${cause.cause.message}` : '';
  return `${cause.message}${inner}`;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
