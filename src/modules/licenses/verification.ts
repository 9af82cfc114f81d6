import type { Clock } from '../../platform/clock.js';
import type { Db } from '../../platform/db/database.js';
import { isDatabaseUnavailable } from '../../platform/db/errors.js';
import type { LicenseMetadata, LicenseStatus } from '../../platform/db/schema.js';
import { notFound } from '../../platform/errors.js';
import { apiKeyAppId, type Principal } from '../../platform/http/principal.js';
import type { NameLimitExcess } from '../../platform/http/rate-limit.js';
import type { Log } from '../../platform/log.js';
import {
  parseJti,
  type TokenDenylist,
  type TokenSigner,
  verificationTierOf,
} from '../license-tokens/index.js';
import { effectiveFeatures } from './entitlements.js';
import { verifyKeyLimit } from './key-rate-limit.js';
import { andThen, type Later } from './later.js';
import { normalizeLicenseKey } from './license-key.js';
import { clientStatus, effectiveStatus, grantsUse, keepsAccess, REASON_OF_STATUS } from './license-status.js';
import type { DeviceLabelInput, VerificationResultType, VerifyCode } from './schemas.js';
import { recordSeatEvent, type SeatReleaseReason } from './seat-events.js';
import * as store from './store.js';
import { checkInDeadline, type UsageState, usesRemaining } from './terms.js';
import { createUsageConsumer } from './usage.js';
import type { Found, LicenseState, VerificationCache } from './verification-cache.js';

export interface VerificationDeps {
  db: Db;
  clock: Clock;
  log: Log;
  signer: TokenSigner | null;
  denylist: TokenDenylist;
  jwksUri: string;
  /** Tallies outcomes in memory for the admin analytics; it must not do I/O (hot path). */
  counts: { count(appId: string, valid: boolean, at?: Date): void };
  /**
   * Every lookup of a key goes through it; it reads the store on a miss, and while the database
   * is away answers what it held (within its outage grace) or throws the failure (503).
   */
  cache: Pick<VerificationCache, 'find' | 'bound' | 'relabeled'>;
  /** Counts answers by code ('valid' when undefined) for the metrics; in memory only. */
  outcomes?: (code: VerifyCode | undefined) => void;
}

/**
 * A check-in is written at most once per license and node in this long: a client verifying
 * every minute costs one write an hour, and a deadline days away moves by at most this.
 */
export const CHECK_IN_STEP_MS = 60 * 60_000;

export type Verification = ReturnType<typeof createVerification>;

/**
 * What client software calls: verify a key (activating the device when there is room),
 * validate an already bound device, and introspect or revoke the tokens handed out. Invalid
 * outcomes are answers (200, valid: false, a reason code), not errors.
 */
export function createVerification({
  db,
  clock,
  log,
  signer,
  denylist,
  jwksUri,
  counts,
  cache,
  outcomes,
}: VerificationDeps) {
  const notFoundResult: VerificationResultType = {
    valid: false,
    appId: null,
    code: 'license_not_found',
    status: 'NOT_FOUND',
    expiresAt: null,
    email: null,
    verificationType: null,
    hw_bound: false,
  };
  const unknownKey = () => {
    outcomes?.(notFoundResult.code);
    return notFoundResult;
  };

  function lookup(
    key: string,
    hwuid: string | null,
    appId: string | undefined,
    excess?: NameLimitExcess,
  ): Later<Found | null> {
    const canonical = normalizeLicenseKey(key);
    if (!canonical) return null;
    const found = cache.find(canonical, hwuid);
    if (appId === undefined && excess === undefined) return found;
    return andThen(found, (known) => {
      // A key of another app answers exactly like a key that does not exist.
      const mine = known && (appId === undefined || known.state.app_id === appId) ? known : null;
      // Past the plain per-key limit: only a floating license's seats allow more.
      if (excess && excess.count > verifyKeyLimit(mine?.state, excess.max)) excess.refuse();
      return mine;
    });
  }

  /**
   * The answer for a license found, as of `now`. Built in one of few fixed shapes (no spreads):
   * the serializer reads every answer, and objects of many shapes made its reads slow.
   */
  function answer(
    found: LicenseState,
    outcome: { code?: VerifyCode; hwBound: boolean; leaseExpiresAt?: Date },
    now: Date,
  ): Later<VerificationResultType> {
    const status = effectiveStatus(found.status, found.expires_at, now);
    // Only a license that grants no use can be keeping access past its expiry.
    const kept = !grantsUse(status) && keepsAccess(found, now);
    const code =
      outcome.code ??
      (grantsUse(status) || kept ? undefined : REASON_OF_STATUS[status as keyof typeof REASON_OF_STATUS]);
    const expiresAt = found.expires_at ? found.expires_at.toISOString().replace(/\.\d{3}Z$/, 'Z') : null;
    // Every verification that found its license ends here (unknown keys have no app to count
    // for); a valid one is counted once its answer is complete, so a failed signing is not.
    if (code !== undefined) {
      counts.count(found.app_id, false, now);
      outcomes?.(code);
      return {
        valid: false,
        appId: found.app_id,
        code,
        status: clientStatus(status),
        expiresAt,
        email: found.email,
        verificationType: verificationTierOf(found.tier),
        hw_bound: outcome.hwBound,
      };
    }
    // A quota's count is read each time, as seats are: consumes on any node change it.
    if (found.max_uses === null) return grant(found, outcome, now, status, kept, expiresAt, null);
    return store.usageOf(db, found.id).then(
      (usage) => grant(found, outcome, now, status, kept, expiresAt, usage ?? found),
      (err) => {
        if (!isDatabaseUnavailable(err)) throw err;
        return grant(found, outcome, now, status, kept, expiresAt, found);
      },
    );
  }

  function grant(
    found: LicenseState,
    outcome: { hwBound: boolean; leaseExpiresAt?: Date },
    now: Date,
    status: LicenseStatus,
    kept: boolean,
    expiresAt: string | null,
    usage: UsageState | null,
  ): Later<VerificationResultType> {
    const features = effectiveFeatures(found);
    const granted: VerificationResultType = {
      valid: true,
      appId: found.app_id,
      status: clientStatus(status),
      expiresAt,
      email: found.email,
      verificationType: verificationTierOf(found.tier),
      hw_bound: outcome.hwBound,
      features: features ?? [],
    };
    if (kept) granted.expired = true;
    if (outcome.leaseExpiresAt) granted.lease_expires_at = outcome.leaseExpiresAt.toISOString();
    const checkInBy = checkInDeadline(found);
    if (checkInBy) granted.check_in_by = checkInBy.toISOString();
    const remaining = usage === null ? null : usesRemaining(usage, now);
    if (remaining !== null) granted.uses_remaining = remaining;
    if (!signer) {
      counts.count(found.app_id, true, now);
      outcomes?.(undefined);
      return granted;
    }
    const metadata = found.metadata as LicenseMetadata;
    return signer
      .issue({
        licenseId: found.id,
        appId: found.app_id,
        algorithm: found.token_algorithm,
        status: granted.status,
        hwBound: outcome.hwBound,
        sellerTier: found.tier,
        plan: typeof metadata.plan === 'string' ? metadata.plan : undefined,
        features,
        licenseExpiresAt: found.expires_at,
        expired: kept,
        notAfter: outcome.leaseExpiresAt,
        checkInBy: checkInBy ?? undefined,
        usesRemaining: remaining ?? undefined,
      })
      .then((issued) => {
        counts.count(found.app_id, true, now);
        outcomes?.(undefined);
        if (!issued) return granted;
        granted.license_token = issued.token;
        granted.license_token_expires_at = issued.expiresAt.toISOString();
        granted.license_jwks_uri = jwksUri;
        return granted;
      });
  }

  /**
   * Whether the license's check-in holds. An online verify is a check-in (unless it says
   * checkIn: false), written at most every CHECK_IN_STEP_MS, so a verify answered from memory
   * stays so. Past the deadline (check-in days and grace since the last one) the license is
   * overdue: the verify that finds it so answers check_in_overdue and records the check-in, so
   * the client's next online verify succeeds; one with checkIn: false only answers overdue. A
   * node whose memory says overdue asks the database first (another node may have had the
   * check-in). A write the database refuses (an outage) does not refuse the client.
   */
  function checkedIn(found: LicenseState, checkIn: boolean, now: Date): Later<boolean> {
    if (found.check_in_days === null) return true;
    if (!isOverdue(found, now)) return checkIn ? recordCheckIn(found, now, true) : true;
    return store.checkedInAt(db, found.id).then(
      (latest) => {
        if (latest && (found.checked_in_at === null || latest > found.checked_in_at))
          found.checked_in_at = latest;
        if (!isOverdue(found, now)) return checkIn ? recordCheckIn(found, now, true) : true;
        return checkIn ? recordCheckIn(found, now, false) : false;
      },
      (err: Error) => {
        if (!isDatabaseUnavailable(err)) throw err;
        return checkIn ? recordCheckIn(found, now, false) : false;
      },
    );
  }

  const isOverdue = (found: LicenseState, now: Date) => {
    const deadline = checkInDeadline(found);
    return deadline !== null && now.getTime() > deadline.getTime();
  };

  /** Writes the check-in when a step has passed since the last one; answers `holds`. */
  function recordCheckIn(found: LicenseState, now: Date, holds: boolean): Later<boolean> {
    const last = (found.checked_in_at ?? found.created_at).getTime();
    if (now.getTime() - last < CHECK_IN_STEP_MS) return holds;
    found.checked_in_at = now;
    return store.recordCheckIn(db, found.id, now, new Date(now.getTime() - CHECK_IN_STEP_MS)).then(
      () => holds,
      (err: Error) => {
        log.warn({ licenseId: found.id, err: { message: err.message } }, 'license.check_in.not_recorded');
        return holds;
      },
    );
  }

  /** The answer after the check-in: `next`, or check_in_overdue. */
  function afterCheckIn(
    found: LicenseState,
    checkIn: boolean,
    now: Date,
    next: () => Later<VerificationResultType>,
  ): Later<VerificationResultType> {
    return andThen(checkedIn(found, checkIn, now), (ok) =>
      ok ? next() : answer(found, { code: 'check_in_overdue', hwBound: false }, now),
    );
  }

  const usable = (found: LicenseState, now: Date) =>
    grantsUse(effectiveStatus(found.status, found.expires_at, now)) || keepsAccess(found, now);

  /**
   * Verify and validate-hardware on a floating license take no seat: valid only for a device
   * holding a live seat, with a token that ends with its lease. Always read from the database.
   */
  async function seatHolder(found: LicenseState, hwuid: string | null, label: DeviceLabelInput, now: Date) {
    const seat = hwuid === null ? undefined : await store.seatLease(db, found.id, hwuid, now);
    if (!seat || hwuid === null) return answer(found, { code: 'seat_required', hwBound: false }, now);
    // A write only when the client says something new about the device.
    if (store.relabels(seat, label)) await store.relabelSeat(db, found.id, hwuid, label);
    return answer(found, { hwBound: true, leaseExpiresAt: seat.lease_expires_at }, now);
  }

  /**
   * A bound device whose client sends another name or platform: written (only what differs),
   * then remembered, so the same label sent again costs nothing.
   */
  async function relabel(
    canonicalKey: string,
    lookedUp: Found & { label: store.DeviceLabel },
    hwuid: string,
    sent: DeviceLabelInput,
    now: Date,
  ): Promise<VerificationResultType> {
    const found = lookedUp.state;
    await store.relabelDevice(db, found.id, hwuid, sent);
    cache.relabeled(canonicalKey, found.id, hwuid, {
      name: sent.name ?? lookedUp.label.name,
      platform: sent.platform ?? lookedUp.label.platform,
    });
    return answer(found, { hwBound: true }, now);
  }

  /** Verify once the license is known: from memory, unless a device is to be bound or relabeled. */
  function verifyFound(
    lookedUp: Found | null,
    hwuid: string | null,
    input: { key: string; checkIn?: boolean } & DeviceLabelInput,
  ): Later<VerificationResultType> {
    if (!lookedUp) return unknownKey();
    const found = lookedUp.state;
    const now = clock.now();
    if (!usable(found, now)) return answer(found, { hwBound: false }, now);
    return afterCheckIn(found, input.checkIn ?? true, now, () => bindOrAnswer(lookedUp, hwuid, input, now));
  }

  function bindOrAnswer(
    lookedUp: Found,
    hwuid: string | null,
    input: { key: string } & DeviceLabelInput,
    now: Date,
  ): Later<VerificationResultType> {
    const { state: found, deviceBound, label } = lookedUp;
    if (found.floating) return seatHolder(found, hwuid, input, now);
    if (hwuid === null) {
      return answer(
        found,
        found.max_devices === null ? { hwBound: false } : { code: 'hwuid_required', hwBound: false },
        now,
      );
    }
    if (deviceBound) {
      if (label && store.relabels(label, input)) {
        return relabel(canonicalKeyOf(input.key), { ...lookedUp, label }, hwuid, input, now);
      }
      return answer(found, { hwBound: true }, now);
    }
    // Past its expiry a license keeping access keeps the devices it had, and binds no new one.
    if (keepsAccess(found, now)) return answer(found, { code: 'license_expired', hwBound: false }, now);
    return activate(lookedUp, hwuid, input, now);
  }

  const canonicalKeyOf = (key: string) => normalizeLicenseKey(key) as string;

  /**
   * Binding stays a conditional write in the database; only its outcome is remembered. A trial
   * binds a device only if that device has had no other trial of the product.
   */
  async function activate(
    lookedUp: Found,
    hwuid: string,
    label: DeviceLabelInput,
    now: Date,
  ): Promise<VerificationResultType> {
    const found = lookedUp.state;
    const trialOf = found.status === 'trial' ? found.product_id : null;
    const activation = await store.activateDevice(db, found.id, hwuid, now, trialOf, label);
    if (activation === 'trial_used') {
      log.info({ licenseId: found.id }, 'license.verify.trial_device_refused');
      return answer(found, { code: 'trial_already_used', hwBound: false }, now);
    }
    if (activation === 'full') {
      log.info({ licenseId: found.id }, 'license.verify.device_refused');
      return answer(found, { code: 'device_limit_reached', hwBound: false }, now);
    }
    // Bound here, or by a concurrent request of the same device (which sent the same label).
    cache.bound(lookedUp, hwuid, { name: label.name ?? null, platform: label.platform ?? null });
    log.info({ licenseId: found.id }, 'license.device.activated');
    return answer(found, { hwBound: true }, now);
  }

  function validateFound(
    lookedUp: Found | null,
    hwuid: string,
    input: { key: string; checkIn?: boolean } & DeviceLabelInput,
  ): Later<VerificationResultType> {
    if (!lookedUp) return unknownKey();
    const { state: found, deviceBound, label } = lookedUp;
    const now = clock.now();
    if (!usable(found, now)) return answer(found, { hwBound: false }, now);
    return afterCheckIn(found, input.checkIn ?? true, now, () => {
      if (found.floating) return seatHolder(found, hwuid, input, now);
      if (!deviceBound) return answer(found, { code: 'device_not_bound', hwBound: false }, now);
      if (label && store.relabels(label, input)) {
        return relabel(canonicalKeyOf(input.key), { ...lookedUp, label }, hwuid, input, now);
      }
      return answer(found, { hwBound: true }, now);
    });
  }

  /** What happened to a seat under the license lock. */
  type SeatOutcome =
    | { kind: 'held'; leaseExpiresAt: Date }
    | { kind: 'full' | 'not_floating' | 'gone' }
    | { kind: 'inactive'; status: LicenseStatus; expiresAt: Date | null };

  const consumeUsage = createUsageConsumer({ db, clock, log, lookup, usable, checkedIn });

  return {
    /**
     * Verifies a key. With a hwuid, a device not yet bound is activated while the license has
     * room; a license with a device limit needs the hwuid. Only an activation writes. A license
     * and device this node knows are answered at once, without a promise, unless a token is
     * signed. A name or platform the device's stored label lacks is written as well.
     * `excess`: the key is past the plain per-key limit, refused unless its seats allow more.
     */
    verify(
      input: { key: string; hwuid?: string; appId?: string; checkIn?: boolean } & DeviceLabelInput,
      excess?: NameLimitExcess,
    ): Later<VerificationResultType> {
      const hwuid = input.hwuid ?? null;
      return andThen(lookup(input.key, hwuid, input.appId, excess), (found) =>
        verifyFound(found, hwuid, input),
      );
    },

    /** Checks a device already bound to the license; never takes a device place. */
    validateHardware(
      input: { key: string; hwuid: string; appId?: string; checkIn?: boolean } & DeviceLabelInput,
      excess?: NameLimitExcess,
    ): Later<VerificationResultType> {
      return andThen(lookup(input.key, input.hwuid, input.appId, excess), (found) =>
        validateFound(found, input.hwuid, input),
      );
    },

    /**
     * Takes a seat on a floating license for this device, or renews the one it holds (a
     * heartbeat), until now + the license's lease. Decided under the license row lock, counting
     * only live leases, so seats never exceed maxSeats and a lapsed lease is free at once.
     */
    async checkout(
      input: { key: string; hwuid: string; appId?: string; checkIn?: boolean } & DeviceLabelInput,
      excess?: NameLimitExcess,
    ): Promise<VerificationResultType> {
      const lookedUp = await lookup(input.key, null, input.appId, excess);
      if (!lookedUp) return unknownKey();
      const found = lookedUp.state;
      const now = clock.now();
      if (!usable(found, now)) return answer(found, { hwBound: false }, now);
      if (!(await checkedIn(found, input.checkIn ?? true, now)))
        return answer(found, { code: 'check_in_overdue', hwBound: false }, now);
      if (!found.floating) return answer(found, { code: 'not_floating', hwBound: false }, now);
      const outcome = await db.transaction().execute(async (trx): Promise<SeatOutcome> => {
        const license = await store.lockLicense(trx, found.id);
        if (!license) return { kind: 'gone' };
        // The cached state may be a moment old; the locked row decides.
        if (
          !grantsUse(effectiveStatus(license.status, license.expires_at, now)) &&
          !keepsAccess(license, now)
        )
          return { kind: 'inactive', status: license.status, expiresAt: license.expires_at };
        if (!license.floating || license.max_seats === null || license.lease_seconds === null)
          return { kind: 'not_floating' };
        const inUse = await store.seatsInUse(trx, license.id, input.hwuid, now);
        if (!inUse.mine && inUse.others >= license.max_seats) return { kind: 'full' };
        const leaseExpiresAt = new Date(now.getTime() + license.lease_seconds * 1000);
        await store.holdSeat(trx, license.id, input.hwuid, now, leaseExpiresAt, inUse.mine, input);
        if (!inUse.mine) {
          await recordSeatEvent(trx, 'license.seat.acquired', license, now, {
            hwuid: input.hwuid,
            name: input.name ?? null,
            platform: input.platform ?? null,
            acquiredAt: now.toISOString(),
            leaseExpiresAt: leaseExpiresAt.toISOString(),
          });
        }
        return { kind: 'held', leaseExpiresAt };
      });
      switch (outcome.kind) {
        case 'held':
          return answer(found, { hwBound: true, leaseExpiresAt: outcome.leaseExpiresAt }, now);
        case 'full':
          log.info({ licenseId: found.id }, 'license.seat.refused');
          return answer(found, { code: 'no_seat_available', hwBound: false }, now);
        case 'not_floating':
          return answer(found, { code: 'not_floating', hwBound: false }, now);
        case 'inactive':
          // Changed since the cached read (suspended, revoked, expired): the locked row says how.
          return answer(
            { ...found, status: outcome.status, expires_at: outcome.expiresAt },
            { hwBound: false },
            now,
          );
        case 'gone':
          return unknownKey();
      }
    },

    /** Consumes uses of the license's quota (usage.ts). */
    consumeUsage,

    /** Gives a device's seat back at once (its lease would lapse anyway). */
    async checkin(input: { key: string; hwuid: string; appId?: string }, excess?: NameLimitExcess) {
      const lookedUp = await lookup(input.key, null, input.appId, excess);
      if (!lookedUp) return { released: false, code: 'license_not_found' as const };
      const found = lookedUp.state;
      if (!found.floating) return { released: false, code: 'not_floating' as const };
      const now = clock.now();
      const released = await db.transaction().execute(async (trx) => {
        const license = await store.lockLicense(trx, found.id);
        if (!license || !(await store.releaseSeat(trx, license.id, input.hwuid, now))) return false;
        await recordSeatEvent(trx, 'license.seat.released', license, now, {
          hwuid: input.hwuid,
          releasedAt: now.toISOString(),
          reason: 'checkin' satisfies SeatReleaseReason,
        });
        return true;
      });
      if (!released) return { released: false, code: 'seat_not_held' as const };
      log.info({ licenseId: found.id }, 'license.seat.released');
      return { released: true };
    },

    /** Signature and claims first, then the live state: the license and the denylist. */
    async introspect(token: string) {
      const checked = signer ? await signer.check(token) : ({ ok: false, reason: 'invalid_token' } as const);
      if (!checked.ok) return { active: false, reason: checked.reason };
      const { claims } = checked;
      if (await denylist.isDenied(claims.jti)) return { active: false, reason: 'token_revoked' };
      const license = await store.findLicenseById(db, checked.licenseId);
      if (!license) return { active: false, reason: 'license_not_found' };
      const now = clock.now();
      const status = effectiveStatus(license.status, license.expires_at, now);
      if (!grantsUse(status) && !keepsAccess(license, now))
        return {
          active: false,
          reason: REASON_OF_STATUS[status as keyof typeof REASON_OF_STATUS],
          status: clientStatus(status),
        };
      const deadline = checkInDeadline(license);
      if (deadline && now.getTime() > deadline.getTime())
        return { active: false, reason: 'check_in_overdue', status: clientStatus(status) };
      return {
        active: true,
        sub: claims.sub,
        aud: claims.aud,
        jti: claims.jti,
        exp: claims.exp,
        iat: claims.iat,
        status: clientStatus(status),
        ...(claims.license_exp !== undefined ? { license_exp: claims.license_exp } : {}),
        svc_vt: claims.svc_vt,
        seller_tier: claims.seller_tier,
        hw_bound: claims.hw_bound,
      };
    },

    /**
     * Puts a token on the denylist by its jti. Only the seller owning the license may; the entry
     * lasts until the token would have expired. Revoking twice is the same as once.
     */
    async revokeToken(principal: Principal, jti: string) {
      const parsed = parseJti(jti);
      const license = parsed ? await store.findLicenseById(db, parsed.licenseId) : undefined;
      const keyApp = apiKeyAppId(principal);
      if (
        !parsed ||
        !license ||
        license.user_id !== principal.userId ||
        (keyApp && keyApp !== license.app_id)
      ) {
        throw notFound('Token');
      }
      if (!(await denylist.deny(jti, license.id, parsed.expiresAt))) throw notFound('Token');
      log.info({ licenseId: license.id }, 'license_token.revoked');
      return { jti, revoked: true as const, expiresAt: parsed.expiresAt.toISOString() };
    },
  };
}
