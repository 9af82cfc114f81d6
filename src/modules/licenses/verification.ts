import type { NameLimitExcess } from '../../platform/http/rate-limit.js';
import type { ClientCall } from '../timeline/index.js';
import type { Found, LicenseState } from './cache-entry.js';
import { createCheckIn } from './check-in.js';
import type { VerificationDeps } from './deps.js';
import { verifyKeyLimit } from './key-rate-limit.js';
import { andThen, type Later } from './later.js';
import { normalizeLicenseKey } from './license-key.js';
import { effectiveStatus, grantsUse, keepsAccess } from './license-status.js';
import type { DeviceLabelInput, VerificationResultType } from './schemas.js';
import { createSeatLeases } from './seat-leases.js';
import * as store from './store.js';
import { createTokenIntrospection } from './token-introspection.js';
import { createUsageConsumer } from './usage.js';
import { createVerificationAnswers } from './verification-answer.js';

export type { VerificationDeps } from './deps.js';

export type Verification = ReturnType<typeof createVerification>;

/** A timeline entry's data saying which call a verification came through (verify says none). */
const VALIDATE_CALL = '{"call":"validate-hardware"}';
const CHECKOUT_CALL = '{"call":"checkout"}';

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
  timeline,
}: VerificationDeps) {
  const { answer, unknownKey } = createVerificationAnswers({ db, signer, jwksUri, counts, outcomes });
  const checkedIn = createCheckIn({ db, log, timeline });

  /**
   * The answer, once there, recorded in the license's timeline (in memory: flushed in batches).
   * A key that matches no license has no timeline to record it in.
   */
  function journaled(
    lookedUp: Found | null,
    hwuid: string | null,
    client: ClientCall | undefined,
    call: string | null,
    result: Later<VerificationResultType>,
  ): Later<VerificationResultType> {
    if (!lookedUp) return result;
    const license = lookedUp.state;
    return andThen(result, (answered) => {
      const outcome = answered.valid ? 'valid' : (answered.code ?? 'invalid');
      timeline.record(license, 'verification', outcome, hwuid, client, clock.now(), call);
      return answered;
    });
  }

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
    client: ClientCall | undefined,
  ): Later<VerificationResultType> {
    if (!lookedUp) return unknownKey();
    const found = lookedUp.state;
    const now = clock.now();
    if (!usable(found, now)) return answer(found, { hwBound: false }, now);
    return afterCheckIn(found, input.checkIn ?? true, now, () =>
      bindOrAnswer(lookedUp, hwuid, input, now, client),
    );
  }

  function bindOrAnswer(
    lookedUp: Found,
    hwuid: string | null,
    input: { key: string } & DeviceLabelInput,
    now: Date,
    client: ClientCall | undefined,
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
    return activate(lookedUp, hwuid, input, now, client);
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
    client: ClientCall | undefined,
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
    if (activation === 'activated') {
      const named =
        label.name || label.platform
          ? JSON.stringify({ name: label.name ?? null, platform: label.platform ?? null })
          : null;
      timeline.record(found, 'device.activated', null, hwuid, client, now, named);
    }
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

  const consumeUsage = createUsageConsumer({ db, clock, log, lookup, usable, checkedIn, timeline });
  const seatLeases = createSeatLeases({ db, clock, log, lookup, usable, checkedIn, answer, unknownKey });
  const tokens = createTokenIntrospection({ db, clock, log, signer, denylist });

  return {
    /**
     * Verifies a key. With a hwuid, a device not yet bound is activated while the license has
     * room; a license with a device limit needs the hwuid. Only an activation writes. A license
     * and device this node knows are answered at once, without a promise, unless a token is
     * signed. A name or platform the device's stored label lacks is written as well.
     * `excess`: the key is past the plain per-key limit, refused unless its seats allow more.
     * `client`: where the call came from, for the license's timeline.
     */
    verify(
      input: { key: string; hwuid?: string; appId?: string; checkIn?: boolean } & DeviceLabelInput,
      excess?: NameLimitExcess,
      client?: ClientCall,
    ): Later<VerificationResultType> {
      const hwuid = input.hwuid ?? null;
      return andThen(lookup(input.key, hwuid, input.appId, excess), (found) =>
        journaled(found, hwuid, client, null, verifyFound(found, hwuid, input, client)),
      );
    },

    /** Checks a device already bound to the license; never takes a device place. */
    validateHardware(
      input: { key: string; hwuid: string; appId?: string; checkIn?: boolean } & DeviceLabelInput,
      excess?: NameLimitExcess,
      client?: ClientCall,
    ): Later<VerificationResultType> {
      return andThen(lookup(input.key, input.hwuid, input.appId, excess), (found) =>
        journaled(found, input.hwuid, client, VALIDATE_CALL, validateFound(found, input.hwuid, input)),
      );
    },

    /** Takes or renews a seat on a floating license (seat-leases.ts). */
    async checkout(
      input: { key: string; hwuid: string; appId?: string; checkIn?: boolean } & DeviceLabelInput,
      excess?: NameLimitExcess,
      client?: ClientCall,
    ): Promise<VerificationResultType> {
      const found = await lookup(input.key, null, input.appId, excess);
      return journaled(found, input.hwuid, client, CHECKOUT_CALL, seatLeases.checkout(found, input));
    },

    /** Consumes uses of the license's quota (usage.ts). */
    consumeUsage,

    /** Gives a device's seat back at once (seat-leases.ts). */
    checkin: seatLeases.checkin,

    introspect: tokens.introspect,
    /** The license a license token stands for now, or why none (token-introspection.ts). */
    tokenHolder: tokens.holderOf,
    revokeToken: tokens.revokeToken,
  };
}
