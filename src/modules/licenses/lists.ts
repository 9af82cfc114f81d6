import type { LicenseRow } from '../../platform/db/schema.js';
import type { CsvValue } from '../../platform/http/csv.js';
import { apiKeyAppId, type Principal } from '../../platform/http/principal.js';
import { isoOrNull, type Page, type Sort, sortOf } from '../../platform/http/schemas.js';
import type { LicenseServiceDeps } from './deps.js';
import { normalizeLicenseKey } from './license-key.js';
import { toLicense } from './license-resource.js';
import type { AllLicensesFilter, LicenseFilter, LicenseSortColumn } from './schemas.js';
import * as store from './store.js';

/** Newest first, unless the query sorts otherwise. */
const NEWEST_FIRST: Sort<LicenseSortColumn> = { column: 'createdAt', descending: true };

/** The columns of the licenses CSV, in order (docs/licenses.md lists them). */
export const LICENSE_CSV_HEADER = [
  'id',
  'key',
  'appId',
  'productId',
  'email',
  'status',
  'createdAt',
  'expiresAt',
  'lastVerifiedAt',
  'deviceCount',
  'maxDevices',
  'floating',
  'maxSeats',
] as const;

function csvRow(row: LicenseRow): CsvValue[] {
  return [
    row.id,
    row.key,
    row.app_id,
    row.product_id,
    row.email,
    row.status,
    isoOrNull(row.created_at),
    isoOrNull(row.expires_at),
    isoOrNull(row.last_verified_at),
    row.device_count,
    row.max_devices,
    row.floating,
    row.max_seats,
  ];
}

/**
 * The seller's license lists: one app's (the app route), all of theirs (an API key: its own
 * app's), and the CSV export of the same filters and sort, read a page at a time.
 */
export function createLicenseLists({ db, apps }: Pick<LicenseServiceDeps, 'db' | 'apps'>) {
  /** All the seller's apps, one app named (404 or 403 as the app routes), or the API key's app. */
  async function sellerScope(principal: Principal, appId: string | undefined): Promise<store.LicenseScope> {
    if (appId) return { userId: principal.userId, appId: (await apps.requireOwnedApp(principal, appId)).id };
    return { userId: principal.userId, appId: apiKeyAppId(principal) };
  }

  /** The filter as the store reads it; null when the key cannot be one of ours (nothing matches). */
  function searchOf(filter: LicenseFilter): store.LicenseSearch | null {
    // A key that cannot be one of ours matches nothing rather than being refused: it is a search.
    const key = filter.key === undefined ? undefined : normalizeLicenseKey(filter.key);
    if (key === null) return null;
    return { status: filter.status, productId: filter.productId, email: filter.email, key };
  }

  async function list(scope: store.LicenseScope, filter: LicenseFilter, page: Page) {
    const search = searchOf(filter);
    if (!search) return { licenses: [], total: 0, ...page };
    const order = store.licenseOrder(sortOf(filter.sort, NEWEST_FIRST));
    const { rows, total } = await store.listLicenses(db, scope, search, order, page);
    return { licenses: rows.map(toLicense), total, ...page };
  }

  return {
    async list(principal: Principal, appId: string, filter: LicenseFilter, page: Page) {
      const app = await apps.requireOwnedApp(principal, appId);
      return list({ appId: app.id }, filter, page);
    },

    listAll: async (principal: Principal, filter: AllLicensesFilter, page: Page) =>
      list(await sellerScope(principal, filter.appId), filter, page),

    /** The rows of the CSV export (LICENSE_CSV_HEADER), read as they are sent. */
    async exportAll(principal: Principal, filter: AllLicensesFilter): Promise<AsyncIterable<CsvValue[]>> {
      const scope = await sellerScope(principal, filter.appId);
      const search = searchOf(filter);
      const order = store.licenseOrder(sortOf(filter.sort, NEWEST_FIRST));
      const rows = search ? store.exportLicenses(db, scope, search, order) : null;
      return (async function* () {
        if (rows) for await (const row of rows) yield csvRow(row);
      })();
    },
  };
}
