import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import type { Clock } from '../clock.js';
import type { Db, Executor } from '../db/database.js';
import { AppError } from '../errors.js';
import { newId } from '../ids.js';
import type { Log } from '../log.js';

/*
 * The table behind Idempotency-Key (see idempotency.ts for the whole rule): claims, the answers
 * kept with the work, and their purge. Keys are stored only as HMACs and answers only sealed.
 */

/** How long a key and its answer are remembered. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/** A claim in progress this long belongs to an attempt that will not finish (its node died). */
export const STALE_CLAIM_MS = 5 * 60 * 1000;
const IN_USE_RETRY_AFTER_SECONDS = 1;

/** Who asked: the key space a key lives in, and how far the caller's credential reaches. */
export interface Caller {
  /** `seller:<user id>` for a seller's session and API keys alike, `public` without credentials. */
  scope: string;
  /** The app an API key is limited to; null for a session (or no credentials). */
  appId: string | null;
}

/** A key under one secret: where its row is, the request's fingerprint, what opens the answer. */
interface KeyName {
  keyHash: string;
  fingerprint: string;
  answerKey: Buffer;
}

export interface Attempt extends Caller {
  claimId: string;
  /** Under each secret, newest first; a claim is made under the first. The key itself is never stored. */
  names: [KeyName, ...KeyName[]];
  /** Whether the service kept the answer in its transaction. */
  kept: boolean;
}

export interface StoredAnswer {
  status: number;
  contentType: string | null;
  body: string;
  requestId: string | null;
}

interface KeyRow {
  fingerprint: string;
  app_id: string | null;
  state: string;
  status_code: number | null;
  content_type: string | null;
  response_body: string | null;
  request_id: string | null;
  created_at: Date;
}

export type ClaimOutcome =
  | { kind: 'claimed' }
  | { kind: 'reused'; why: 'request' | 'credential' }
  /** `abandoned`: in progress past STALE_CLAIM_MS; `retryAfter`: seconds until a retry may do better. */
  | { kind: 'in_use'; abandoned: boolean; retryAfter: number }
  | { kind: 'replay'; answer: StoredAnswer };

export type IdempotencyKeys = ReturnType<typeof createIdempotencyKeys>;

/**
 * The table behind the keys (migrations/0014_idempotency.sql): claim, keep, release, purge.
 * `secrets` (newest first) key the hashes and answers; a database or a backup read alone gives
 * back neither the keys nor the answers.
 */
export function createIdempotencyKeys({
  db,
  clock,
  log,
  secrets,
}: {
  db: Db;
  clock: Clock;
  log: Log;
  secrets: readonly string[];
}) {
  if (secrets.length === 0) throw new Error('idempotency keys need a secret');
  const keyings = secrets.map((secret) => ({
    hashKey: hmac(secret, 'idempotency key hash'),
    fingerprintKey: hmac(secret, 'idempotency request fingerprint'),
    answerKey: hmac(secret, 'idempotency answer key'),
  }));

  const expiredBefore = (now: Date) => new Date(now.getTime() - IDEMPOTENCY_TTL_MS);

  const findRow = (executor: Executor, scope: string, keyHash: string): Promise<KeyRow | undefined> =>
    executor
      .selectFrom('idempotency_keys')
      .select([
        'fingerprint',
        'app_id',
        'state',
        'status_code',
        'content_type',
        'response_body',
        'request_id',
        'created_at',
      ])
      .where('scope', '=', scope)
      .where('key_hash', '=', keyHash)
      .executeTakeFirst();

  /** What a key's row, already there, means for this attempt. */
  function judge(row: KeyRow, attempt: Attempt, name: KeyName): ClaimOutcome {
    if (row.fingerprint !== name.fingerprint) return { kind: 'reused', why: 'request' };
    // An answer goes only to a caller who could have had it: the same app's key, or the session.
    if (attempt.appId !== null && row.app_id !== attempt.appId) return { kind: 'reused', why: 'credential' };
    if (row.state !== 'done' || row.status_code === null || row.response_body === null) {
      const age = clock.now().getTime() - row.created_at.getTime();
      return age < STALE_CLAIM_MS
        ? { kind: 'in_use', abandoned: false, retryAfter: IN_USE_RETRY_AFTER_SECONDS }
        : {
            kind: 'in_use',
            abandoned: true,
            retryAfter: Math.max(1, Math.ceil((IDEMPOTENCY_TTL_MS - age) / 1000)),
          };
    }
    return {
      kind: 'replay',
      answer: {
        status: row.status_code,
        contentType: row.content_type,
        body: decrypt(name.answerKey, boundTo(attempt.scope, name.keyHash), row.response_body),
        requestId: row.request_id,
      },
    };
  }

  async function claimOnce(executor: Executor, attempt: Attempt): Promise<ClaimOutcome | null> {
    const now = clock.now();
    const [own] = attempt.names;
    // One statement: a new key, or one whose row has expired, is ours; any other row (a claim in
    // progress included, however old) stays as it is and nothing is returned.
    const claimed = await executor
      .insertInto('idempotency_keys')
      .values({
        scope: attempt.scope,
        key_hash: own.keyHash,
        fingerprint: own.fingerprint,
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
          .where('idempotency_keys.created_at', '<=', expiredBefore(now)),
      )
      .returning('claim_id')
      .executeTakeFirst();
    if (claimed) return { kind: 'claimed' };
    const row = await findRow(executor, attempt.scope, own.keyHash);
    // Released by a failed attempt in between: claim again.
    return row ? judge(row, attempt, own) : null;
  }

  async function claimFirst(executor: Executor, attempt: Attempt): Promise<ClaimOutcome> {
    return (
      (await claimOnce(executor, attempt)) ??
      (await claimOnce(executor, attempt)) ?? {
        kind: 'in_use',
        abandoned: false,
        retryAfter: IN_USE_RETRY_AFTER_SECONDS,
      }
    );
  }

  /**
   * While secrets rotate, nodes claim under different ones: a key's row under an older secret
   * counts, and one lock per key (named by the hash every such node computes, the lowest) keeps
   * two nodes from claiming the same key under two secrets at once.
   */
  function claimRotating(attempt: Attempt): Promise<ClaimOutcome> {
    return db.transaction().execute(async (trx) => {
      const lock = attempt.names.map((name) => name.keyHash).sort()[0];
      await sql`select pg_advisory_xact_lock(hashtextextended(${`idempotency:${attempt.scope}:${lock}`}, 0))`.execute(
        trx,
      );
      const expired = expiredBefore(clock.now());
      for (const name of attempt.names.slice(1)) {
        const row = await findRow(trx, attempt.scope, name.keyHash);
        if (row && row.created_at > expired) return judge(row, attempt, name);
      }
      return claimFirst(trx, attempt);
    });
  }

  const ownClaim = (executor: Executor, attempt: Attempt) =>
    executor
      .updateTable('idempotency_keys')
      .where('scope', '=', attempt.scope)
      .where('key_hash', '=', attempt.names[0].keyHash)
      .where('claim_id', '=', attempt.claimId)
      .where('state', '=', 'in_progress');

  const sealed = (attempt: Attempt, answer: StoredAnswer) => {
    const [own] = attempt.names;
    return {
      state: 'done' as const,
      status_code: answer.status,
      content_type: answer.contentType,
      response_body: encrypt(own.answerKey, boundTo(attempt.scope, own.keyHash), answer.body),
      request_id: answer.requestId,
    };
  };

  return {
    /** An attempt with `key` by `caller` at `request` (its canonical text); nothing is written yet. */
    attempt(caller: Caller, key: string, request: string): Attempt {
      const named = `${caller.scope}\u0000${key}`;
      const [first, ...others] = keyings.map((keying) => ({
        keyHash: hmac(keying.hashKey, named).toString('hex'),
        fingerprint: hmac(keying.fingerprintKey, request).toString('hex'),
        answerKey: hmac(keying.answerKey, named),
      }));
      return { ...caller, claimId: newId(), kept: false, names: [first as KeyName, ...others] };
    },

    claim(attempt: Attempt): Promise<ClaimOutcome> {
      return attempt.names.length > 1 ? claimRotating(attempt) : claimFirst(db, attempt);
    },

    /**
     * Keeps the answer in the transaction doing the work. A claim that is no longer this
     * attempt's (it expired and was taken over) fails the transaction, so the work is undone.
     */
    async keepInTransaction(trx: Executor, attempt: Attempt, answer: StoredAnswer): Promise<void> {
      const kept = await ownClaim(trx, attempt)
        .set(sealed(attempt, answer))
        .returning('claim_id')
        .executeTakeFirst();
      if (!kept)
        throw new AppError(
          'idempotency_key_in_use',
          'The claim on this Idempotency-Key lapsed while the request ran; nothing was changed',
        );
    },

    /** Keeps an answer once sent (a refusal, or work that committed nothing of its own). */
    async complete(attempt: Attempt, answer: StoredAnswer): Promise<void> {
      await ownClaim(db, attempt).set(sealed(attempt, answer)).execute();
    },

    /** Forgets a claim still in progress, so a retry does the work; a kept answer stays. */
    async release(attempt: Attempt): Promise<void> {
      await db
        .deleteFrom('idempotency_keys')
        .where('scope', '=', attempt.scope)
        .where('key_hash', '=', attempt.names[0].keyHash)
        .where('claim_id', '=', attempt.claimId)
        .where('state', '=', 'in_progress')
        .execute();
    },

    /** Deletes keys past their 24 hours (the purge job; safe on any number of nodes at once). */
    async purgeExpired(): Promise<number> {
      const rows = await db
        .deleteFrom('idempotency_keys')
        .where('created_at', '<=', expiredBefore(clock.now()))
        .returning('key_hash')
        .execute();
      if (rows.length) log.info({ purged: rows.length }, 'idempotency.keys.purged');
      return rows.length;
    },
  };
}

const hmac = (key: string | Buffer, text: string) => createHmac('sha256', key).update(text).digest();

/** The associated data an answer is sealed with: it opens only in the row it was kept in. */
const boundTo = (scope: string, keyHash: string) => Buffer.from(`${scope}\u0000${keyHash}`, 'utf8');

// AES-256-GCM: iv (12 bytes), tag (16 bytes) and ciphertext, in base64url.
function encrypt(key: Buffer, associated: Buffer, text: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv).setAAD(associated);
  const sealed = Buffer.concat([cipher.update(text, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64url');
}

function decrypt(key: Buffer, associated: Buffer, stored: string): string {
  const bytes = Buffer.from(stored, 'base64url');
  const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, 12)).setAAD(associated);
  decipher.setAuthTag(bytes.subarray(12, 28));
  return Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]).toString('utf8');
}
