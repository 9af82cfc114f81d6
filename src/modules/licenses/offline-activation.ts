import { createHash } from 'node:crypto';
import type { Clock } from '../../platform/clock.js';
import type { Db } from '../../platform/db/database.js';
import type { LicenseMetadata, LicenseStatus, SigningAlgorithm } from '../../platform/db/schema.js';
import { AppError, type ErrorCode, invalidField, notFound } from '../../platform/errors.js';
import { apiKeyAppId, type Principal } from '../../platform/http/principal.js';
import type { Log } from '../../platform/log.js';
import { type LicenseFileSigner, revocationListPeriod } from '../license-tokens/index.js';
import { type Actor, actorOf, recordEntry } from '../timeline/index.js';
import { effectiveFeatures } from './entitlements.js';
import { normalizeLicenseKey } from './license-key.js';
import { clientStatus, effectiveStatus, keepsAccess } from './license-status.js';
import {
  findLicenseByKey,
  holdDeviceOffline,
  type OfflineLicense,
  openAppAlgorithm,
  revokedLicenses,
} from './offline-store.js';
import * as store from './store.js';

/**
 * Air-gapped activation. A machine with no network writes an activation request (base64url of
 * `{"v":1,"key","hwuid","nonce","appId"?,"createdAt"?}`); the seller's support (or the
 * buyer in the portal) hands it in, the device is bound exactly like an online activation —
 * one conditional write under the device limit — and a signed license file comes back. The
 * device is then held until the file expires: only the seller can release it sooner.
 * Revocation reaches such machines through the app's signed revocation list.
 */

export const ACTIVATION_REQUEST_VERSION = 1;
const NONCE = /^[A-Za-z0-9_-]{16,128}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface ActivationRequest {
  key: string;
  hwuid: string;
  nonce: string;
  appId?: string;
}

export interface OfflineActivationOptions {
  /** How long the file is valid, in days (1–3650); a year by default, never past the license. */
  validDays?: number;
  /** Wrap the signed file in a JWE only the license key opens. */
  encrypt?: boolean;
}

/**
 * Reads an activation request, naming the field at fault (`request`, `request.v`,
 * `request.key`, …). Unknown members are ignored, so a newer client can add some.
 */
export function parseActivationRequest(text: string): ActivationRequest & { canonicalKey: string } {
  const blob = text.trim();
  let decoded: unknown;
  try {
    if (!/^[A-Za-z0-9_-]+$/.test(blob)) throw new Error('not base64url');
    decoded = JSON.parse(Buffer.from(blob, 'base64url').toString('utf8'));
  } catch {
    throw invalidField('request', 'must be an activation request as the client wrote it (base64url JSON)');
  }
  if (typeof decoded !== 'object' || decoded === null || Array.isArray(decoded)) {
    throw invalidField('request', 'must be an activation request as the client wrote it (base64url JSON)');
  }
  const request = decoded as Record<string, unknown>;
  if (request.v !== ACTIVATION_REQUEST_VERSION) {
    throw invalidField(
      'request.v',
      `must be ${ACTIVATION_REQUEST_VERSION}: this service reads version 1 requests`,
    );
  }
  const canonicalKey = typeof request.key === 'string' ? normalizeLicenseKey(request.key) : null;
  if (!canonicalKey) throw invalidField('request.key', 'must be a license key');
  const { hwuid, nonce, appId, createdAt } = request;
  if (typeof hwuid !== 'string' || hwuid.length === 0 || hwuid.length > 200 || !/\S/.test(hwuid)) {
    throw invalidField('request.hwuid', 'must be 1 to 200 characters, not blank');
  }
  if (typeof nonce !== 'string' || !NONCE.test(nonce)) {
    throw invalidField('request.nonce', 'must be 16 to 128 base64url characters');
  }
  if (appId !== undefined && (typeof appId !== 'string' || !UUID.test(appId))) {
    throw invalidField('request.appId', 'must be a UUID when present');
  }
  if (createdAt !== undefined && (typeof createdAt !== 'string' || Number.isNaN(Date.parse(createdAt)))) {
    throw invalidField('request.createdAt', 'must be a date-time when present');
  }
  return {
    key: request.key as string,
    canonicalKey,
    hwuid,
    nonce,
    ...(appId !== undefined ? { appId: (appId as string).toLowerCase() } : {}),
  };
}

/**
 * Why a license that grants no offline use is refused, one code per status. A trial is refused
 * too: its one-trial-per-device rule is kept by online activation.
 */
const REFUSAL_OF_STATUS = {
  suspended: 'license_suspended',
  revoked: 'license_revoked',
  expired: 'license_expired',
  trial: 'license_trial',
} as const satisfies Partial<Record<LicenseStatus, ErrorCode>>;

function refusal(status: LicenseStatus): AppError {
  const code = REFUSAL_OF_STATUS[status as keyof typeof REFUSAL_OF_STATUS] ?? 'conflict';
  const why = status === 'trial' ? 'in its trial; trials are activated online' : status;
  return new AppError(code, `The license is ${why}; it cannot be activated offline`);
}

export type OfflineActivation = ReturnType<typeof createOfflineActivation>;

export function createOfflineActivation({
  db,
  clock,
  log,
  signer,
}: {
  db: Db;
  clock: Clock;
  log: Log;
  /** Null when license signing is off (LICENSE_TOKENS=off): nothing offline can be issued. */
  signer: LicenseFileSigner | null;
}) {
  async function requireSigner(algorithm: SigningAlgorithm): Promise<LicenseFileSigner> {
    if (!signer || !(await signer.ready(algorithm))) {
      throw new AppError('conflict', 'License files need the signing keys, and license signing is off here');
    }
    return signer;
  }

  /**
   * Binds the request's device to the license and signs its license file. The caller has
   * already decided who may act on this license; this is the one path both the seller's API
   * and the buyer portal take. `actor` is who handed the request in, for the license's timeline.
   */
  async function activateLicense(
    license: OfflineLicense,
    request: ActivationRequest & { canonicalKey: string },
    actor: Actor,
    options: OfflineActivationOptions = {},
  ) {
    const fileSigner = await requireSigner(license.token_algorithm);
    if (license.floating) {
      throw new AppError(
        'license_floating',
        'A floating license cannot be activated offline: its seats are leases renewed online',
      );
    }
    const now = clock.now();
    const status = effectiveStatus(license.status, license.expires_at, now);
    // Past its expiry, a license keeping access gives files to the devices it already had.
    const kept = keepsAccess(license, now);
    if (status !== 'active' && !kept) throw refusal(status);
    let activated = false;
    if (!(await store.findDevice(db, license.id, request.hwuid))) {
      if (kept) throw refusal('expired');
      // The same conditional write as online activation: racing activations never pass the limit.
      const outcome = await store.activateDevice(db, license.id, request.hwuid, now);
      if (outcome === 'full') {
        const current = await store.findLicenseById(db, license.id);
        const nowStatus = current
          ? effectiveStatus(current.status, current.expires_at, clock.now())
          : 'revoked';
        if (nowStatus !== 'active') throw refusal(nowStatus);
        throw new AppError(
          'device_limit_reached',
          'Every device place of this license is taken; release a device first',
        );
      }
      activated = outcome === 'activated';
    }
    const metadata = license.metadata as LicenseMetadata;
    const issued = await fileSigner.issue(
      {
        licenseId: license.id,
        appId: license.app_id,
        algorithm: license.token_algorithm,
        hwuid: request.hwuid,
        nonce: request.nonce,
        status: clientStatus(kept ? 'expired' : 'active'),
        sellerTier: license.tier,
        plan: typeof metadata.plan === 'string' ? metadata.plan : undefined,
        features: effectiveFeatures(license),
        licenseExpiresAt: license.expires_at,
        keepsAccess: license.expiry_strategy === 'maintain_access',
        ...(license.check_in_days !== null
          ? { checkInDays: license.check_in_days + (license.grace_days ?? 0) }
          : {}),
      },
      {
        ...(options.validDays !== undefined ? { validDays: options.validDays } : {}),
        ...(options.encrypt ? { encryptTo: request.canonicalKey } : {}),
      },
    );
    if (!issued) throw new AppError('conflict', 'License files need the signing keys, and none signs yet');
    // The file leaves only once its device is held until it expires, so a buyer cannot free the
    // place while the file still works (the seller can). A release in between leaves no file out.
    if (!(await holdDeviceOffline(db, license.id, request.hwuid, issued.expiresAt))) {
      throw new AppError(
        'conflict',
        'The device was released while its license file was being signed; hand the request in again',
      );
    }
    log.info({ licenseId: license.id, activated, kid: issued.kid }, 'license.device.activated_offline');
    await recordEntry(db, license, {
      type: 'license_file.issued',
      hwuid: request.hwuid,
      actor,
      data: {
        activated,
        encrypted: options.encrypt === true,
        expiresAt: issued.expiresAt.toISOString(),
      },
      occurredAt: now,
    });
    return {
      licenseId: license.id,
      appId: license.app_id,
      hwuid: request.hwuid,
      nonce: request.nonce,
      activated,
      encrypted: options.encrypt === true,
      licenseFile: issued.licenseFile,
      issuedAt: issued.issuedAt.toISOString(),
      expiresAt: issued.expiresAt.toISOString(),
    };
  }

  return {
    activateLicense,

    /**
     * The seller's path: the license named by the request's key must be theirs, and of the API
     * key's app when an API key calls; any other answers 404, like a key that does not exist.
     */
    async activate(principal: Principal, input: { request: string } & OfflineActivationOptions) {
      const request = parseActivationRequest(input.request);
      const license = await findLicenseByKey(db, request.canonicalKey);
      const keyApp = apiKeyAppId(principal);
      if (
        !license ||
        license.user_id !== principal.userId ||
        (keyApp !== null && keyApp !== license.app_id) ||
        (request.appId !== undefined && request.appId !== license.app_id)
      ) {
        throw notFound('License');
      }
      return activateLicense(license, request, actorOf(principal), input);
    },

    /**
     * The app's signed revocation list, signed now. `etag` names its entries and version within the
     * hour, so a current copy answers 304 to If-None-Match without signing anything.
     */
    async revocations(appId: string, ifNoneMatch: string | undefined) {
      const algorithm = await openAppAlgorithm(db, appId);
      if (!algorithm) throw notFound('App');
      const fileSigner = await requireSigner(algorithm);
      const { rows, version } = await revokedLicenses(db, appId, clock.now());
      const revoked = rows.map((row) => ({ sub: row.id, at: Math.floor(row.updated_at.getTime() / 1000) }));
      const period = revocationListPeriod(clock.now());
      // The algorithm too: a list signed before the app changed it is not current after.
      const digest = createHash('sha256').update(
        JSON.stringify([appId, algorithm, version, period, revoked]),
      );
      const etag = `"${digest.digest('base64url').slice(0, 27)}"`;
      if (ifNoneMatch?.split(',').some((tag) => tag.trim() === etag)) {
        return { notModified: true as const, etag };
      }
      const signed = await fileSigner.revocationList({ id: appId, algorithm }, version, revoked);
      if (!signed) throw new AppError('conflict', 'License files need the signing keys, and none signs yet');
      return {
        notModified: false as const,
        etag,
        list: {
          appId,
          version,
          count: revoked.length,
          revocationList: signed.list,
          issuedAt: signed.issuedAt.toISOString(),
          expiresAt: signed.expiresAt.toISOString(),
        },
      };
    },
  };
}
