import type { Clock } from '../../platform/clock.js';
import type { Db } from '../../platform/db/database.js';
import type { LicenseRow } from '../../platform/db/schema.js';
import type { Principal } from '../../platform/http/principal.js';
import type { NameLimitExcess } from '../../platform/http/rate-limit.js';
import type { Log } from '../../platform/log.js';
import type { AppService } from '../apps/index.js';
import type { TokenDenylist, TokenSigner } from '../license-tokens/index.js';
import type { ProductService } from '../products/index.js';
import type { TimelineJournal } from '../timeline/index.js';
import type { Found, LicenseState } from './cache-entry.js';
import type { Later } from './later.js';
import type { VerifyCode } from './schemas.js';
import type { VerificationCache } from './verification-cache.js';

/*
 * What the license service and verification are built from, shared by the files that compose
 * them (service.ts, verification.ts) and each use-case file: in a file of its own, so neither
 * imports the other.
 */

export interface LicenseServiceDeps {
  db: Db;
  clock: Clock;
  log: Log;
  apps: Pick<AppService, 'requireOwnedApp'>;
  products: Pick<ProductService, 'licenseTerms' | 'requireLicenseTerms' | 'forCheckout'>;
  /** Every change to what verification reads is announced in its transaction, then forgotten here. */
  cache: Pick<VerificationCache, 'announceLicense' | 'forgetLicense' | 'announceSeller' | 'forgetSeller'>;
}

/** The seller's license under one of their apps, or 404 (license-resource.ts). */
export type RequireLicense = (principal: Principal, appId: string, licenseId: string) => Promise<LicenseRow>;

/** What a seller's use case of a license is built from: it starts by finding the license. */
export type SellerUseCaseDeps = Pick<LicenseServiceDeps, 'db' | 'clock' | 'log' | 'cache'> & {
  requireLicense: RequireLicense;
};

export interface VerificationDeps {
  db: Db;
  clock: Clock;
  log: Log;
  signer: TokenSigner | null;
  denylist: TokenDenylist;
  jwksUri: string;
  /**
   * Tallies outcomes in memory for the admin analytics, and the license's last verification for
   * its lastVerifiedAt; it must not do I/O (hot path).
   */
  counts: { count(appId: string, valid: boolean, at: Date, licenseId: string): void };
  /**
   * Every lookup of a key goes through it; it reads the store on a miss, and while the database
   * is away answers what it held (within its outage grace) or throws the failure (503).
   */
  cache: Pick<VerificationCache, 'find' | 'bound' | 'relabeled'>;
  /** Counts answers by code ('valid' when undefined) for the metrics; in memory only. */
  outcomes?: (code: VerifyCode | undefined) => void;
  /**
   * The licenses' timelines: each answer, activation, check-in and consume of a license found is
   * buffered in memory and written by the flush job; it must not do I/O (hot path).
   */
  timeline: Pick<TimelineJournal, 'record'>;
}

/**
 * Verification's own lookups (the key through the cache and the per-key limit, whether the
 * license grants use, its check-in), which a consume and a seat's call are built from.
 */
export interface VerificationLookups {
  lookup: (
    key: string,
    hwuid: string | null,
    appId: string | undefined,
    excess?: NameLimitExcess,
  ) => Later<Found | null>;
  usable: (found: LicenseState, now: Date) => boolean;
  checkedIn: (found: LicenseState, checkIn: boolean, now: Date) => Later<boolean>;
}
