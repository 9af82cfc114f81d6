/** A value now, or later: the verify path answers what this node knows without a promise. */
export type Later<T> = T | Promise<T>;

/**
 * `next` applied to `value` at once when it is there, else once it arrives. A verify answered
 * from memory then costs no promise and no microtask turn at any step (a chain of awaits did, on
 * the path every installed copy calls).
 */
export function andThen<T, R>(value: Later<T>, next: (value: T) => Later<R>): Later<R> {
  return value instanceof Promise ? value.then(next) : next(value);
}
