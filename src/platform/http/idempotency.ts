import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import type { FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import Type, { type TSchema } from 'typebox';
import type { Clock } from '../clock.js';
import type { Db } from '../db/database.js';
import { AppError } from '../errors.js';
import { newId } from '../ids.js';
import type { Log } from '../log.js';
import type { HttpApp } from './create-http-app.js';
import type { Principal } from './principal.js';

/**
 * Idempotent requests: a route declaring `config: { idempotent: true }` (the creating POSTs)
 * accepts an `Idempotency-Key` header. The first request with a key claims it in the database
 * (one conditional insert) before its handler runs, and its answer is kept for 24 hours; a retry
 * with the same key and the same request gets that answer again, marked
 * `Idempotent-Replayed: true`, without the work being done twice, on any node. The same key with
 * another request answers 422 `idempotency_key_reused`; while the first is still running, 409
 * `idempotency_key_in_use`. A 5xx answer releases the claim, so the retry does the work; a claim
 * left by a node that died is taken over after STALE_CLAIM_MS. docs/api-conventions.md says
 * the same for clients.
 */

export const IDEMPOTENCY_KEY_HEADER = 'idempotency-key';
export const REPLAYED_HEADER = 'idempotent-replayed';
/** How long a key and its answer are remembered. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/** An in-progress claim this old belongs to an attempt that will not finish (its node died). */
export const STALE_CLAIM_MS = 5 * 60 * 1000;
const IN_USE_RETRY_AFTER_SECONDS = '1';

/** The optional header as the route schema declares it: validated, and shown in the API reference. */
const KeyHeader = Type.String({
  pattern: '^[\\x20-\\x7E]{1,255}$',
  errorMessage: 'must be 1 to 255 printable ASCII characters',
  description:
    'Makes the request safe to retry: the same key with the same request within 24 hours answers the first answer again, with `Idempotent-Replayed: true`, instead of doing the work twice. Use a new random key (a UUID) per operation.',
});

/** Who asked: the key space a key lives in, and how far the caller's credential reaches. */
interface Caller {
  /** `seller:<user id>` for a seller's session and API keys alike, `public` without credentials. */
  scope: string;
  /** The app an API key is limited to; null for a session (or no credentials). */
  appId: string | null;
}

interface Attempt extends Caller {
  keyHash: string;
  /** Encrypts the stored answer; derived from the key, which is never stored. */
  bodyKey: Buffer;
  fingerprint: string;
  claimId: string;
}

interface StoredAnswer {
  status: number;
  contentType: string | null;
  body: string;
  requestId: string | null;
}

type ClaimOutcome =
  | { kind: 'claimed' }
  | { kind: 'reused'; why: 'request' | 'credential' }
  | { kind: 'in_use' }
  | { kind: 'replay'; answer: StoredAnswer };

export type IdempotencyKeys = ReturnType<typeof createIdempotencyKeys>;

/** The table behind the keys (migrations/0014_idempotency.sql): claim, complete, release, purge. */
export function createIdempotencyKeys({ db, clock, log }: { db: Db; clock: Clock; log: Log }) {
  async function claimOnce(attempt: Attempt): Promise<ClaimOutcome | null> {
    const now = clock.now();
    const expired = new Date(now.getTime() - IDEMPOTENCY_TTL_MS);
    const stale = new Date(now.getTime() - STALE_CLAIM_MS);
    // One statement: a new key, or one whose row has expired, or a stale claim of the same
    // request, is ours; any other row stays as it is and nothing is returned.
    const claimed = await db
      .insertInto('idempotency_keys')
      .values({
        scope: attempt.scope,
        key_hash: attempt.keyHash,
        fingerprint: attempt.fingerprint,
        app_id: attempt.appId,
        state: 'in_progress',
        claim_id: attempt.claimId,
        created_at: now,
      })
      .onConflict((conflict) =>
        conflict
          .columns(['scope', 'key_hash'])
          .doUpdateSet((eb) => ({
            fingerprint: eb.ref('excluded.fingerprint'),
            app_id: eb.ref('excluded.app_id'),
            state: 'in_progress',
            claim_id: eb.ref('excluded.claim_id'),
            status_code: null,
            content_type: null,
            response_body: null,
            request_id: null,
            created_at: eb.ref('excluded.created_at'),
          }))
          .where((eb) =>
            eb.or([
              eb('idempotency_keys.created_at', '<=', expired),
              eb.and([
                eb('idempotency_keys.state', '=', 'in_progress'),
                eb('idempotency_keys.created_at', '<=', stale),
                eb('idempotency_keys.fingerprint', '=', eb.ref('excluded.fingerprint')),
              ]),
            ]),
          ),
      )
      .returning('claim_id')
      .executeTakeFirst();
    if (claimed) return { kind: 'claimed' };
    const row = await db
      .selectFrom('idempotency_keys')
      .select([
        'fingerprint',
        'app_id',
        'state',
        'status_code',
        'content_type',
        'response_body',
        'request_id',
      ])
      .where('scope', '=', attempt.scope)
      .where('key_hash', '=', attempt.keyHash)
      .executeTakeFirst();
    // Released by a failed attempt in between: claim again.
    if (!row) return null;
    if (row.fingerprint !== attempt.fingerprint) return { kind: 'reused', why: 'request' };
    // An answer goes only to a caller who could have had it: the same app's key, or the session.
    if (attempt.appId !== null && row.app_id !== attempt.appId) return { kind: 'reused', why: 'credential' };
    if (row.state !== 'done' || row.status_code === null || row.response_body === null)
      return { kind: 'in_use' };
    return {
      kind: 'replay',
      answer: {
        status: row.status_code,
        contentType: row.content_type,
        body: decrypt(attempt.bodyKey, row.response_body),
        requestId: row.request_id,
      },
    };
  }

  const ownClaim = (attempt: Attempt) =>
    db
      .updateTable('idempotency_keys')
      .where('scope', '=', attempt.scope)
      .where('key_hash', '=', attempt.keyHash)
      .where('claim_id', '=', attempt.claimId)
      .where('state', '=', 'in_progress');

  return {
    async claim(attempt: Attempt): Promise<ClaimOutcome> {
      return (await claimOnce(attempt)) ?? (await claimOnce(attempt)) ?? { kind: 'in_use' };
    },

    /** Keeps the answer the client got; a claim taken over meanwhile is left to its new owner. */
    async complete(attempt: Attempt, answer: StoredAnswer): Promise<void> {
      await ownClaim(attempt)
        .set({
          state: 'done',
          status_code: answer.status,
          content_type: answer.contentType,
          response_body: encrypt(attempt.bodyKey, answer.body),
          request_id: answer.requestId,
        })
        .execute();
    },

    /** Forgets a claim whose attempt failed, so a retry does the work. */
    async release(attempt: Attempt): Promise<void> {
      await db
        .deleteFrom('idempotency_keys')
        .where('scope', '=', attempt.scope)
        .where('key_hash', '=', attempt.keyHash)
        .where('claim_id', '=', attempt.claimId)
        .where('state', '=', 'in_progress')
        .execute();
    },

    /** Deletes keys past their 24 hours (the purge job; safe on any number of nodes at once). */
    async purgeExpired(): Promise<number> {
      const before = new Date(clock.now().getTime() - IDEMPOTENCY_TTL_MS);
      const rows = await db
        .deleteFrom('idempotency_keys')
        .where('created_at', '<=', before)
        .returning('key_hash')
        .execute();
      if (rows.length) log.info({ purged: rows.length }, 'idempotency.keys.purged');
      return rows.length;
    },
  };
}

/**
 * Hooks on one host: a route flagged `idempotent` gets the header in its schema (validated, and
 * shown in the API reference), a claim before its handler and its answer kept once it is sent.
 * The hooks are the route's own, so other routes (verify above all) pay nothing for them.
 */
export function registerIdempotency(app: HttpApp, keys: IdempotencyKeys): void {
  const attempts = new WeakMap<FastifyRequest, Attempt>();

  async function claim(request: FastifyRequest, reply: FastifyReply) {
    const key = request.headers[IDEMPOTENCY_KEY_HEADER];
    // The schema has checked the value; an absent header leaves the request as it is.
    if (typeof key !== 'string') return;
    const attempt = attemptOf(request, key);
    const outcome = await keys.claim(attempt);
    switch (outcome.kind) {
      case 'claimed':
        attempts.set(request, attempt);
        return;
      case 'reused':
        throw new AppError(
          'idempotency_key_reused',
          outcome.why === 'request'
            ? 'Idempotency-Key was already used for a different request; use a new key for a new request'
            : 'Idempotency-Key was already used by a credential that reaches other apps; use a new key',
          [{ field: 'Idempotency-Key', message: 'was already used for a different request' }],
        );
      case 'in_use':
        reply.header('retry-after', IN_USE_RETRY_AFTER_SECONDS);
        throw new AppError(
          'idempotency_key_in_use',
          'A request with this Idempotency-Key is still in progress; retry after Retry-After seconds',
        );
      case 'replay':
        return replay(request, reply, outcome.answer);
    }
  }

  async function keep(request: FastifyRequest, reply: FastifyReply, payload: unknown) {
    const attempt = attempts.get(request);
    if (!attempt) return payload;
    attempts.delete(request);
    const body =
      typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString('utf8') : null;
    try {
      // A 5xx did not do the work (or cannot say it did): the retry must be free to do it.
      if (reply.statusCode >= 500 || body === null) await keys.release(attempt);
      else
        await keys.complete(attempt, {
          status: reply.statusCode,
          contentType: headerText(reply.getHeader('content-type')),
          body,
          requestId: request.id,
        });
    } catch (err) {
      // The answer itself stands; the claim lapses after STALE_CLAIM_MS.
      request.log.warn({ err: { message: (err as Error).message } }, 'idempotency.answer.not_kept');
    }
    return payload;
  }

  app.addHook('onRoute', (route) => {
    if (!route.config?.idempotent) return;
    route.schema = { ...route.schema, headers: withKeyHeader(route.schema?.headers as TSchema | undefined) };
    // After the route's own hooks: credentials and the body have been checked by then.
    route.preHandler = [...[route.preHandler ?? []].flat(), claim] as RouteOptions['preHandler'];
    route.onSend = [...[route.onSend ?? []].flat(), keep] as RouteOptions['onSend'];
  });
}

function replay(request: FastifyRequest, reply: FastifyReply, answer: StoredAnswer) {
  request.log.info({ originalRequestId: answer.requestId, status: answer.status }, 'idempotency.replayed');
  // The first answer's request id, so an error body's requestId and the header still agree.
  if (answer.requestId) reply.header('x-request-id', answer.requestId);
  if (answer.contentType) reply.header('content-type', answer.contentType);
  return reply.code(answer.status).header(REPLAYED_HEADER, 'true').send(answer.body);
}

function withKeyHeader(headers: TSchema | undefined): TSchema {
  if (!headers) return Type.Object({ [IDEMPOTENCY_KEY_HEADER]: Type.Optional(KeyHeader) });
  const declared = headers as TSchema & { properties?: Record<string, TSchema> };
  return { ...declared, properties: { ...declared.properties, [IDEMPOTENCY_KEY_HEADER]: KeyHeader } };
}

function callerOf(principal: Principal | null): Caller {
  if (!principal) return { scope: 'public', appId: null };
  return {
    scope: `seller:${principal.userId}`,
    appId: principal.credential.kind === 'api_key' ? principal.credential.appId : null,
  };
}

function attemptOf(request: FastifyRequest, key: string): Attempt {
  const caller = callerOf(request.principal);
  // The request as the route understood it: key order and spacing in the body do not matter.
  const fingerprint = sha256(
    canonicalJson([
      request.method,
      request.routeOptions.url,
      request.params ?? {},
      request.query ?? {},
      request.body ?? null,
    ]),
  );
  return {
    ...caller,
    keyHash: sha256(`idempotency-key\u0000${key}`),
    bodyKey: createHash('sha256').update(`idempotency-body\u0000${caller.scope}\u0000${key}`).digest(),
    fingerprint,
    claimId: newId(),
  };
}

/** JSON with object keys sorted at every level, so equal values always give equal text. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, current: unknown) => {
    if (current === null || typeof current !== 'object' || Array.isArray(current)) return current;
    const entries = Object.entries(current as Record<string, unknown>).sort(([a], [b]) =>
      a < b ? -1 : a > b ? 1 : 0,
    );
    return Object.fromEntries(entries);
  });
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

function headerText(value: ReturnType<FastifyReply['getHeader']>): string | null {
  if (value === undefined) return null;
  return Array.isArray(value) ? value.join(', ') : String(value);
}

// AES-256-GCM: iv (12 bytes), tag (16 bytes) and ciphertext, in base64url.
function encrypt(key: Buffer, text: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const sealed = Buffer.concat([cipher.update(text, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64url');
}

function decrypt(key: Buffer, stored: string): string {
  const bytes = Buffer.from(stored, 'base64url');
  const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, 12));
  decipher.setAuthTag(bytes.subarray(12, 28));
  return Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]).toString('utf8');
}
