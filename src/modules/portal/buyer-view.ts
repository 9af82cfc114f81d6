import { effectiveStatus, LONGEST_RELEASE_PERIOD_DAYS, releaseAllowance } from '../licenses/index.js';
import type { HolderDownloads } from '../releases/index.js';
import type { PortalServiceDeps } from './deps.js';
import type { PortalView } from './pages.js';
import type { Session } from './sessions.js';
import * as store from './store.js';
import { statusWord, withheldWords } from './words.js';

/** What the portal page shows a signed-in buyer: their licenses, orders and subscriptions. */
export function createBuyerView({
  db,
  clock,
  brands,
  releases: distribution,
}: Pick<PortalServiceDeps, 'db' | 'clock' | 'brands' | 'releases'>) {
  return async function view(
    session: Session,
    notice: string | null,
    problem: PortalView['problem'] = null,
  ): Promise<PortalView> {
    const now = clock.now();
    const [licenseRows, orders, subscriptionRows] = await Promise.all([
      store.buyerLicenses(db, session.email),
      store.buyerOrders(db, session.email),
      store.buyerSubscriptions(db, session.email),
    ]);
    const ids = licenseRows.map((row) => row.id);
    const floatingIds = licenseRows.filter((row) => row.floating).map((row) => row.id);
    const sellerIds = [
      ...new Set([...licenseRows, ...subscriptionRows, ...orders].map((row) => row.seller_id)),
    ];
    const [devices, seats, releases, brandOf, downloads] = await Promise.all([
      store.devicesOf(db, ids),
      store.seatsOf(db, floatingIds, now),
      store.buyerReleasesOf(db, ids, new Date(now.getTime() - LONGEST_RELEASE_PERIOD_DAYS * 86_400_000)),
      brands.forSellers(sellerIds),
      Promise.all(licenseRows.map((row) => distribution.forHolder(row))),
    ]);
    // Each seller with a brand once; entries point at theirs by position, never by the seller's id.
    const sellers = sellerIds.flatMap((id) => {
      const brand = brandOf.get(id);
      return brand ? [{ id, brand }] : [];
    });
    const sellerOf = (id: string) => {
      const at = sellers.findIndex((seller) => seller.id === id);
      return at < 0 ? null : at;
    };
    return {
      email: session.email,
      sellers: sellers.map((seller) => seller.brand),
      csrf: session.csrf,
      notice,
      problem,
      licenses: licenseRows.map((row, at) => {
        const bound = devices.filter((device) => device.license_id === row.id);
        return {
          id: row.id,
          seller: sellerOf(row.seller_id),
          name: row.product_name ?? row.app_name,
          key: row.key,
          status: statusWord(effectiveStatus(row.status, row.expires_at, now)),
          expiresAt: row.expires_at,
          floating: row.floating,
          places: row.floating
            ? `Up to ${row.max_seats ?? 0} devices at once`
            : row.max_devices === null
              ? `${bound.length} devices, no limit`
              : `${bound.length} of ${row.max_devices} devices`,
          devices: bound.map((device) => ({
            hwuid: device.hwuid,
            name: device.name,
            platform: device.platform,
            activatedAt: device.activated_at,
            offlineUntil: device.offline_until && device.offline_until > now ? device.offline_until : null,
          })),
          seats: seats
            .filter((seat) => seat.license_id === row.id)
            .map((seat) => ({
              hwuid: seat.hwuid,
              name: seat.name,
              platform: seat.platform,
              acquiredAt: seat.acquired_at,
              leaseExpiresAt: seat.lease_expires_at,
            })),
          downloads: downloadsView(downloads[at] as HolderDownloads),
          releases: releaseAllowance(
            row,
            releases.filter((release) => release.license_id === row.id).map((release) => release.released_at),
            now,
          ),
        };
      }),
      orders: orders.map((row) => ({
        seller: sellerOf(row.seller_id),
        transactionId: row.transaction_id,
        name: row.name,
        amount: row.amount,
        currency: row.currency,
        status: statusWord(row.status),
        at: row.paid_at ?? row.created_at,
      })),
      subscriptions: subscriptionRows.map((row) => ({
        id: row.id,
        seller: sellerOf(row.seller_id),
        name: row.name,
        status: statusWord(row.status),
        interval: row.interval,
        currentPeriodEnd: row.current_period_end,
        canceledAt: row.canceled_at,
      })),
    };
  };
}

/** What a license's downloads show: the releases with their files, or why there are none. */
function downloadsView(downloads: HolderDownloads): PortalView['licenses'][number]['downloads'] {
  return {
    refused: downloads.refused,
    withheld: downloads.withheld ? withheldWords(downloads.withheld) : null,
    releases: downloads.releases.map((release) => ({
      version: release.version,
      channel: release.channel,
      publishedAt: release.publishedAt,
      notes: release.notes,
      artifacts: release.artifacts,
    })),
  };
}
