import type { FastifyRequest } from 'fastify';
import type { Db, Executor } from '../db/database.js';

/**
 * Idempotent requests: a route declaring `config: { idempotent: true }` (the creating POSTs)
 * accepts an `Idempotency-Key` header. The first request with a key claims it in the database
 * (one conditional insert) before its handler runs. Its service keeps the answer in the
 * transaction that does the work (`IdempotentAnswer`), so work and answer commit together or not
 * at all. A retry with the same key and request, within 24 hours and on any node, gets that
 * answer again, marked `Idempotent-Replayed: true`. The same key with another request answers
 * 422 `idempotency_key_reused`; a claim still in progress answers 409 `idempotency_key_in_use`
 * and is never taken over, even once its node has died (it may have done part of its work), until
 * it expires. A refusal (4xx) is kept once sent; a 5xx frees a claim still in progress, while an
 * answer committed with the work stays. Keys are hashed, and answers encrypted, under the
 * server's secret. docs/api-conventions.md says the same for clients.
 *
 * What a creating service uses is here; the table of keys and answers is idempotency-keys.ts;
 * the hooks that claim a key before the handler, settle it after and replay an answer are
 * idempotency-hooks.ts.
 */

/**
 * The answer of an idempotent request, kept by its service inside the transaction that does the
 * work, so a retry finds it exactly when the work committed. Routes pass `idempotentAnswer(request)`
 * down; it is undefined when the request carries no key.
 */
export interface IdempotentAnswer<T> {
  keep(trx: Executor, answer: T): Promise<void>;
}

/**
 * Runs `work` in a transaction and keeps its result as the request's answer (when it claimed a
 * key) in that same transaction: the shape of every creating service.
 */
export function transactionWithAnswer<T>(
  db: Db,
  answer: IdempotentAnswer<T> | undefined,
  work: (trx: Executor) => Promise<T>,
): Promise<T> {
  return db.transaction().execute(async (trx) => {
    const result = await work(trx);
    await answer?.keep(trx, result);
    return result;
  });
}

const answers = new WeakMap<FastifyRequest, IdempotentAnswer<unknown>>();

/** The request's answer keeper, when it claimed an Idempotency-Key. */
export function idempotentAnswer(request: FastifyRequest): IdempotentAnswer<unknown> | undefined {
  return answers.get(request);
}

/** Gives a request that claimed its key the keeper its service keeps the answer with. */
export function holdAnswer(request: FastifyRequest, keeper: IdempotentAnswer<unknown>): void {
  answers.set(request, keeper);
}

/** Once the answer is sent, the request keeps nothing. */
export function dropAnswer(request: FastifyRequest): void {
  answers.delete(request);
}
