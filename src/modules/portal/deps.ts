import type { Clock } from '../../platform/clock.js';
import type { Db } from '../../platform/db/database.js';
import type { Log } from '../../platform/log.js';
import type { BrandService } from '../brand/index.js';
import type { LicenseService, OfflineActivation } from '../licenses/index.js';
import type { Distribution } from '../releases/index.js';
import type { SubscriptionService } from '../subscriptions/index.js';

/*
 * What the portal service is built from, shared by service.ts (which composes it) and the files
 * it is composed of (sessions.ts, buyer-view.ts): in a file of its own, so neither imports the other.
 */

export interface PortalServiceDeps {
  db: Db;
  clock: Clock;
  log: Log;
  /** The checkout host's public address: the links point at it, and https makes the cookie Secure. */
  payUrl: string;
  /** The server secret sign-in links are derived under when their mail is sent (every node's). */
  linkSecret: string;
  licenses: Pick<LicenseService, 'releaseBuyerDevice' | 'releaseBuyerSeat'>;
  offline: Pick<OfflineActivation, 'activateLicense'>;
  subscriptions: Pick<SubscriptionService, 'cancelForBuyer'>;
  /** The sellers' names, logos and colours, shown with what the buyer bought from each. */
  brands: Pick<BrandService, 'forSellers'>;
  /** Which releases each license may download, and fresh links to their files. */
  releases: Pick<Distribution, 'forHolder' | 'holderLink'>;
}
