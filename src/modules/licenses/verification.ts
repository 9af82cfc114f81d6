import type { Clock } from '../../platform/clock.js';
import type { Db } from '../../platform/db/database.js';
import type { LicenseMetadata, LicenseStatus } from '../../platform/db/schema.js';
import { notFound } from '../../platform/errors.js';
import { apiKeyAppId, type Principal } from '../../platform/http/principal.js';
import type { Log } from '../../platform/log.js';
import {
  parseJti,
  type TokenDenylist,
  type TokenSigner,
  verificationTierOf,
} from '../license-tokens/index.js';
import { effectiveFeatures } from './entitlements.js';
import { normalizeLicenseKey } from './license-key.js';
import { clientStatus, effectiveStatus, grantsUse } from './license-status.js';
import type { VerificationResultType, VerifyCode } from './schemas.js';
import { recordSeatEvent, type SeatReleaseReason } from './seat-events.js';
import * as store from './store.js';
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
  cache: Pick<VerificationCache, 'find' | 'bound'>;
  /** Counts answers by code ('valid' when undefined) for the metrics; in memory only. */
  outcomes?: (code: VerifyCode | undefined) => void;
}

const REASON_OF_STATUS = {
  expired: 'license_expired',
  suspended: 'license_suspended',
  revoked: 'license_revoked',
} as const;

/** A value now, or later: the verify path answers what this node knows without a promise. */
export type Later<T> = T | Promise<T>;

/**
 * `next` applied to `value` at once when it is there, else once it arrives. A verify answered
 * from memory then costs no promise and no microtask turn at any step (a chain of awaits did, on
 * the path every installed copy calls).
 */
function andThen<T, R>(value: Later<T>, next: (value: T) => Later<R>): Later<R> {
  return value instanceof Promise ? value.then(next) : next(value);
}

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

  function lookup(key: string, hwuid: string | null, appId: string | undefined): Later<Found | null> {
    const canonical = normalizeLicenseKey(key);
    if (!canonical) return null;
    const found = cache.find(canonical, hwuid);
    // A key of another app answers exactly like a key that does not exist.
    if (appId === undefined) return found;
    return andThen(found, (known) => (known && known.state.app_id === appId ? known : null));
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
    const code =
      outcome.code ??
      (grantsUse(status) ? undefined : REASON_OF_STATUS[status as keyof typeof REASON_OF_STATUS]);
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
    if (outcome.leaseExpiresAt) granted.lease_expires_at = outcome.leaseExpiresAt.toISOString();
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
        notAfter: outcome.leaseExpiresAt,
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

  const usable = (found: LicenseState, now: Date) =>
    grantsUse(effectiveStatus(found.status, found.expires_at, now));

  /**
   * Verify and validate-hardware on a floating license take no seat: valid only for a device
   * holding a live seat, with a token that ends with its lease. Always read from the database.
   */
  async function seatHolder(found: LicenseState, hwuid: string | null, now: Date) {
    const lease = hwuid === null ? undefined : await store.seatLease(db, found.id, hwuid, now);
    return lease
      ? answer(found, { hwBound: true, leaseExpiresAt: lease }, now)
      : answer(found, { code: 'seat_required', hwBound: false }, now);
  }

  /** Verify once the license is known: from memory, unless a device is to be bound. */
  function verifyFound(lookedUp: Found | null, hwuid: string | null): Later<VerificationResultType> {
    if (!lookedUp) return unknownKey();
    const { state: found, deviceBound } = lookedUp;
    const now = clock.now();
    if (!usable(found, now)) return answer(found, { hwBound: false }, now);
    if (found.floating) return seatHolder(found, hwuid, now);
    if (hwuid === null) {
      return answer(
        found,
        found.max_devices === null ? { hwBound: false } : { code: 'hwuid_required', hwBound: false },
        now,
      );
    }
    if (deviceBound) return answer(found, { hwBound: true }, now);
    return activate(lookedUp, hwuid, now);
  }

  /**
   * Binding stays a conditional write in the database; only its outcome is remembered. A trial
   * binds a device only if that device has had no other trial of the product.
   */
  async function activate(lookedUp: Found, hwuid: string, now: Date): Promise<VerificationResultType> {
    const found = lookedUp.state;
    const trialOf = found.status === 'trial' ? found.product_id : null;
    const activation = await store.activateDevice(db, found.id, hwuid, now, trialOf);
    if (activation === 'trial_used') {
      log.info({ licenseId: found.id }, 'license.verify.trial_device_refused');
      return answer(found, { code: 'trial_already_used', hwBound: false }, now);
    }
    if (activation === 'full') {
      log.info({ licenseId: found.id }, 'license.verify.device_refused');
      return answer(found, { code: 'device_limit_reached', hwBound: false }, now);
    }
    cache.bound(lookedUp, hwuid);
    log.info({ licenseId: found.id }, 'license.device.activated');
    return answer(found, { hwBound: true }, now);
  }

  function validateFound(lookedUp: Found | null, hwuid: string): Later<VerificationResultType> {
    if (!lookedUp) return unknownKey();
    const { state: found, deviceBound } = lookedUp;
    const now = clock.now();
    if (!usable(found, now)) return answer(found, { hwBound: false }, now);
    if (found.floating) return seatHolder(found, hwuid, now);
    return answer(found, deviceBound ? { hwBound: true } : { code: 'device_not_bound', hwBound: false }, now);
  }

  /** What happened to a seat under the license lock. */
  type SeatOutcome =
    | { kind: 'held'; leaseExpiresAt: Date }
    | { kind: 'full' | 'not_floating' | 'gone' }
    | { kind: 'inactive'; status: LicenseStatus; expiresAt: Date | null };

  return {
    /**
     * Verifies a key. With a hwuid, a device not yet bound is activated while the license has
     * room; a license with a device limit needs the hwuid. Only an activation writes. A license
     * and device this node knows are answered at once, without a promise, unless a token is
     * signed.
     */
    verify(input: { key: string; hwuid?: string; appId?: string }): Later<VerificationResultType> {
      const hwuid = input.hwuid ?? null;
      return andThen(lookup(input.key, hwuid, input.appId), (found) => verifyFound(found, hwuid));
    },

    /** Checks a device already bound to the license; never takes a device place. */
    validateHardware(input: { key: string; hwuid: string; appId?: string }): Later<VerificationResultType> {
      return andThen(lookup(input.key, input.hwuid, input.appId), (found) =>
        validateFound(found, input.hwuid),
      );
    },

    /**
     * Takes a seat on a floating license for this device, or renews the one it holds (a
     * heartbeat), until now + the license's lease. Decided under the license row lock, counting
     * only live leases, so seats never exceed maxSeats and a lapsed lease is free at once.
     */
    async checkout(input: { key: string; hwuid: string; appId?: string }): Promise<VerificationResultType> {
      const lookedUp = await lookup(input.key, null, input.appId);
      if (!lookedUp) return unknownKey();
      const found = lookedUp.state;
      const now = clock.now();
      if (!usable(found, now)) return answer(found, { hwBound: false }, now);
      if (!found.floating) return answer(found, { code: 'not_floating', hwBound: false }, now);
      const outcome = await db.transaction().execute(async (trx): Promise<SeatOutcome> => {
        const license = await store.lockLicense(trx, found.id);
        if (!license) return { kind: 'gone' };
        // The cached state may be a moment old; the locked row decides.
        if (!grantsUse(effectiveStatus(license.status, license.expires_at, now)))
          return { kind: 'inactive', status: license.status, expiresAt: license.expires_at };
        if (!license.floating || license.max_seats === null || license.lease_seconds === null)
          return { kind: 'not_floating' };
        const inUse = await store.seatsInUse(trx, license.id, input.hwuid, now);
        if (!inUse.mine && inUse.others >= license.max_seats) return { kind: 'full' };
        const leaseExpiresAt = new Date(now.getTime() + license.lease_seconds * 1000);
        await store.holdSeat(trx, license.id, input.hwuid, now, leaseExpiresAt, inUse.mine);
        if (!inUse.mine) {
          await recordSeatEvent(trx, 'license.seat.acquired', license, now, {
            hwuid: input.hwuid,
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

    /** Gives a device's seat back at once (its lease would lapse anyway). */
    async checkin(input: { key: string; hwuid: string; appId?: string }) {
      const lookedUp = await lookup(input.key, null, input.appId);
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
      const status = effectiveStatus(license.status, license.expires_at, clock.now());
      if (!grantsUse(status))
        return {
          active: false,
          reason: REASON_OF_STATUS[status as keyof typeof REASON_OF_STATUS],
          status: clientStatus(status),
        };
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
