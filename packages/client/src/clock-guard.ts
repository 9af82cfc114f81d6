/**
 * The clock-rollback guard, on the machine: the latest time seen and the latest issue time the
 * service vouched for, kept between runs, so a clock turned back to stretch a license file is
 * noticed. verifyLicenseFile, checkRevocations and LicenseTokenVerifier keep it.
 */

/**
 * The clock-rollback guard's memory, kept between runs (ms since 1970). A license file or
 * revocation list issued after `vouchedAt` resets the guard: `lastSeen` may have come from a clock
 * once set ahead by mistake, and the service has vouched for a later time since. The clock can
 * then go back to that issue time at the earliest, never before.
 */
export interface ClockState {
  /** The latest time this machine has seen. */
  lastSeen: number;
  /** The latest issue time of a license file or revocation list checked here; absent before the first. */
  vouchedAt?: number;
}

/** Where the clock state or the revocations live between runs (a file, the registry, storage). */
export interface StateStore<T> {
  load(): T | undefined | Promise<T | undefined>;
  save(value: T): void | Promise<void>;
}

/** The state as held: the object itself, or what the store loads. */
export async function loadState<T>(state: T | StateStore<T> | undefined): Promise<T | undefined> {
  if (state === undefined) return undefined;
  return isStore(state) ? await state.load() : state;
}

/**
 * Tells the clock-rollback guard that the service vouched for `issuedAt` (a revocation list or a
 * license token that passed its checks, the machine's online check): when that is newer than any
 * file, list or token checked before, and the clock is not before it, the guard resets to now.
 */
export async function vouchForClock(
  state: ClockState | StateStore<ClockState>,
  issuedAt: number,
  now: number,
  toleranceMs: number,
): Promise<void> {
  const clock = await loadState(state);
  const reset = clock?.vouchedAt !== undefined && issuedAt > clock.vouchedAt && now >= issuedAt - toleranceMs;
  await rememberClock(state, clock, { vouchedAt: issuedAt, seenAt: now, reset });
}

/**
 * Keeps what a check learnt: the issue time the service vouched for, and, when the check passed,
 * the time seen — in place of the latest one when `reset` (see ClockState). Saves only a change.
 */
export async function rememberClock(
  state: ClockState | StateStore<ClockState>,
  held: ClockState | undefined,
  learnt: { vouchedAt: number; seenAt?: number; reset?: boolean },
): Promise<void> {
  const lastSeen =
    learnt.seenAt === undefined
      ? (held?.lastSeen ?? 0)
      : learnt.reset || held === undefined
        ? learnt.seenAt
        : Math.max(learnt.seenAt, held.lastSeen);
  const vouchedAt = Math.max(learnt.vouchedAt, held?.vouchedAt ?? Number.NEGATIVE_INFINITY);
  if (held?.lastSeen === lastSeen && held.vouchedAt === vouchedAt) return;
  if (isStore(state)) {
    await state.save({ lastSeen, vouchedAt });
  } else {
    state.lastSeen = lastSeen;
    state.vouchedAt = vouchedAt;
  }
}

function isStore<T>(state: T | StateStore<T>): state is StateStore<T> {
  return typeof (state as StateStore<T>).load === 'function';
}
