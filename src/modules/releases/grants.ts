import type { LicenseStatus, ReleaseChannel } from '../../platform/db/schema.js';
import { invalidField } from '../../platform/errors.js';
import {
  effectiveFeatures,
  effectiveStatus,
  grantsUse,
  keepsAccess,
  REASON_OF_STATUS,
} from '../licenses/index.js';
import { RELEASE_CHANNELS } from './schemas.js';

/**
 * What a license may receive, before any release is looked at: how a client presents its
 * license, the channels an entitlement opens, and the grant of a license held by a buyer.
 */

/**
 * How a client presents its license: the key (and the device, as verify takes it), or a license
 * token verify signed, which stands for the license and the device it was signed for.
 */
export type LicenseCredential = { key: string; hwuid?: string } | { token: string };

/** What a client says about itself when it asks for a release. */
export type LicensedClient = LicenseCredential & {
  appId: string;
  platform?: string;
  arch?: string;
};

/** A request's credential fields as the routes take them: one of key and token, checked here. */
export interface CredentialFields {
  key?: string;
  token?: string;
  hwuid?: string;
}

/**
 * The credential a request sent: a key (with its device, if any) or a token, never both, never
 * neither; a token names its device, so a hwuid beside it is refused. `names` are the request's
 * own names for the fields (the feeds send them in headers), for the 400 to name.
 */
export function credentialOf(
  fields: CredentialFields,
  names: Record<keyof CredentialFields, string> = { key: 'key', token: 'token', hwuid: 'hwuid' },
): LicenseCredential {
  const { key, token, hwuid } = fields;
  if (key !== undefined && token !== undefined) {
    throw invalidField(names.token, 'send the license key or a license token, not both');
  }
  if (token !== undefined) {
    if (hwuid !== undefined) {
      throw invalidField(names.hwuid, 'is not sent with a token: the token stands for its device');
    }
    return { token };
  }
  if (key === undefined) throw invalidField(names.key, 'is required: the license key, or a license token');
  return hwuid === undefined ? { key } : { key, hwuid };
}

/** What the license check leaves for the release rules: the license's entitlements and expiry. */
export interface Grant {
  features: readonly string[];
  /** Set when the license is past its expiry and keeps access: releases published by then only. */
  publishedBy: Date | null;
}

/** An entitlement `channel:<name>` opens that channel (and the more stable ones) to a license. */
const CHANNEL_ENTITLEMENT = 'channel:';

/**
 * The channels a client following `channel` receives: that one and every more stable one
 * (beta receives rc and stable), in RELEASE_CHANNELS's order from the most stable.
 */
export function channelsFor(channel: ReleaseChannel): ReleaseChannel[] {
  return RELEASE_CHANNELS.slice(0, RELEASE_CHANNELS.indexOf(channel) + 1);
}

/**
 * Whether the license may follow `channel`. A license with no `channel:` entitlement may follow
 * any; one with some follows the least stable channel they name, and the more stable ones.
 */
export function channelGranted(features: readonly string[], channel: ReleaseChannel): boolean {
  const named = features
    .filter((feature) => feature.startsWith(CHANNEL_ENTITLEMENT))
    .map((feature) => RELEASE_CHANNELS.indexOf(feature.slice(CHANNEL_ENTITLEMENT.length) as ReleaseChannel));
  if (named.length === 0) return true;
  return RELEASE_CHANNELS.indexOf(channel) <= Math.max(...named);
}

/**
 * A license as its holder's own pages know it (the buyer portal): no device and no client call,
 * only what the release rules read. Downloading an installer is not running the software, so
 * device places, seats and check-ins do not apply; status, expiry and entitlements do.
 */
export interface HeldLicense {
  id: string;
  app_id: string;
  status: LicenseStatus;
  expires_at: Date | null;
  expiry_strategy: 'restrict' | 'maintain_access';
  features: string[] | null;
  metadata: unknown;
  product_features: string[] | null;
}

/** Why a held license receives no download at all: its status, as verify names it. */
export type HolderRefusal = (typeof REASON_OF_STATUS)[keyof typeof REASON_OF_STATUS];

/**
 * The grant of a held license as verify would decide it from its record (status, expiry,
 * maintain_access, entitlements), or the code of its refusal.
 */
export function holderGrant(license: HeldLicense, now: Date): Grant | { refused: HolderRefusal } {
  const features = effectiveFeatures(license) ?? [];
  const status = effectiveStatus(license.status, license.expires_at, now);
  if (grantsUse(status)) return { features, publishedBy: null };
  if (keepsAccess(license, now) && license.expires_at) return { features, publishedBy: license.expires_at };
  return { refused: REASON_OF_STATUS[status as keyof typeof REASON_OF_STATUS] ?? 'license_expired' };
}
