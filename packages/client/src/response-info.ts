/** What the SDK saw while getting an answer; read it with responseInfo(answer). */
export interface ResponseInfo {
  /** The HTTP status of the answer that was returned. */
  status: number;
  /** The service's request id (X-Request-Id), to quote to support. */
  requestId: string | undefined;
  /** The Idempotency-Key sent with a creating call, the same on every attempt. */
  idempotencyKey: string | undefined;
  /** True when the service replayed the first answer for this key (Idempotent-Replayed: true). */
  replayed: boolean;
  /** How many requests were sent, retries included. */
  attempts: number;
}

// Kept beside the answer rather than on it, so answers stay plain data (JSON.stringify, deepEqual).
const infos = new WeakMap<object, ResponseInfo>();

export function responseInfoFor<T>(answer: T, info: ResponseInfo): T {
  if (typeof answer === 'object' && answer !== null) infos.set(answer, info);
  return answer;
}

/**
 * How an answer was obtained: status, request id, the Idempotency-Key sent, whether the service
 * replayed an earlier answer, and how many attempts it took. Undefined for values the SDK did not
 * return (and for calls that answer nothing, such as deletes).
 */
export function responseInfo(answer: unknown): ResponseInfo | undefined {
  return typeof answer === 'object' && answer !== null ? infos.get(answer) : undefined;
}
