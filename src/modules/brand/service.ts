import type { Clock } from '../../platform/clock.js';
import type { Db } from '../../platform/db/database.js';
import { AppError } from '../../platform/errors.js';
import type { Principal } from '../../platform/http/principal.js';
import { isoOrNull } from '../../platform/http/schemas.js';
import type { Log } from '../../platform/log.js';
import { accentColours } from './accent.js';
import { type BrandView, brandView, logoPath, logoVersion } from './brand-view.js';
import { type LogoType, prepareLogo } from './logo.js';
import { type OverlayOriginPolicy, refuseOverlayOrigin } from './overlay-origins.js';
import * as store from './store.js';

export interface BrandServiceDeps {
  db: Db;
  clock: Clock;
  log: Log;
  /** {pay_url}: where logos and the overlay script are served to buyers. */
  payUrl: string;
  overlayOrigins: OverlayOriginPolicy;
}

export interface BrandInput {
  displayName?: string | null;
  accentColor?: string | null;
  overlayOrigins?: string[];
}

/** A logo as its public route answers it. */
export interface ServedLogo {
  bytes: Buffer;
  type: LogoType;
  etag: string;
  /** Whether the address asked for this very version (it may then be kept for a year). */
  current: boolean;
}

export type BrandService = ReturnType<typeof createBrandService>;

/**
 * The seller's brand: settings a signed-in seller changes for their own account only (there is
 * no route that names another seller's brand), and what pages and e-mails show of it.
 */
export function createBrandService({ db, clock, log, payUrl, overlayOrigins }: BrandServiceDeps) {
  function toBrand(row: store.BrandRow | undefined) {
    const colours = row?.accent_color ? accentColours(row.accent_color) : null;
    return {
      id: row?.public_id ?? null,
      displayName: row?.display_name ?? null,
      accentColor: colours?.accent ?? null,
      accentTextColor: colours?.onAccent ?? null,
      logo:
        row?.logo_type && row.logo_sha256
          ? {
              url: `${payUrl}${logoPath(row.public_id, row.logo_sha256)}`,
              contentType: row.logo_type,
              width: row.logo_width ?? 0,
              height: row.logo_height ?? 0,
              bytes: row.logo_bytes ?? 0,
              sha256: row.logo_sha256,
            }
          : null,
      overlayOrigins: row?.overlay_origins ?? [],
      overlayScriptUrl: `${payUrl}/overlay.js`,
      updatedAt: isoOrNull(row?.updated_at ?? null),
    };
  }

  /** The input's values as stored, or the refusal naming every field that is wrong. */
  function settingsOf(input: BrandInput) {
    const problems: { field: string; message: string }[] = [];
    const changes: {
      display_name?: string | null;
      accent_color?: string | null;
      overlay_origins?: string[];
    } = {};
    if (input.displayName !== undefined) {
      const name = input.displayName?.trim() ?? null;
      if (name === '')
        problems.push({ field: 'displayName', message: 'must not be blank (send null to remove it)' });
      changes.display_name = name;
    }
    if (input.accentColor !== undefined) changes.accent_color = input.accentColor?.toLowerCase() ?? null;
    if (input.overlayOrigins !== undefined) {
      input.overlayOrigins.forEach((origin, index) => {
        const problem = refuseOverlayOrigin(origin, overlayOrigins);
        if (problem) problems.push({ field: `overlayOrigins.${index}`, message: problem });
      });
      changes.overlay_origins = input.overlayOrigins;
    }
    if (problems.length)
      throw new AppError(
        'validation_failed',
        problems.map((problem) => `${problem.field}: ${problem.message}`).join('; '),
        problems,
      );
    return changes;
  }

  return {
    async get(principal: Principal) {
      return toBrand(await store.findBrand(db, principal.userId));
    },

    async update(principal: Principal, input: BrandInput) {
      const changes = settingsOf(input);
      const row = await store.saveBrand(db, principal.userId, changes, clock.now());
      log.info({ userId: principal.userId, fields: Object.keys(changes) }, 'brand.updated');
      return toBrand(row);
    },

    /** Checks and re-encodes the upload, then replaces the logo; a refused upload changes nothing. */
    async replaceLogo(principal: Principal, upload: Uint8Array) {
      const logo = await prepareLogo(upload);
      const row = await store.saveBrand(
        db,
        principal.userId,
        {
          logo: logo.bytes,
          logo_type: logo.type,
          logo_sha256: logo.sha256,
          logo_width: logo.width,
          logo_height: logo.height,
        },
        clock.now(),
      );
      log.info(
        { userId: principal.userId, bytes: logo.bytes.length, width: logo.width, height: logo.height },
        'brand.logo.replaced',
      );
      return toBrand(row);
    },

    async removeLogo(principal: Principal) {
      const empty = { logo: null, logo_type: null, logo_sha256: null, logo_width: null, logo_height: null };
      const row = await store.saveBrand(db, principal.userId, empty, clock.now());
      log.info({ userId: principal.userId }, 'brand.logo.removed');
      return toBrand(row);
    },

    /** The logo under its public id, for anyone (it is shown on the seller's pages); null when none. */
    async logo(brandId: string, version: string | undefined): Promise<ServedLogo | null> {
      const found = await store.findLogo(db, brandId);
      if (!found) return null;
      return {
        bytes: Buffer.from(found.logo),
        type: found.logo_type,
        etag: `"${found.logo_sha256.slice(0, 32)}"`,
        current: version === logoVersion(found.logo_sha256),
      };
    },

    /** What a seller's pages show of their brand; null for a seller without one. */
    async forSeller(userId: string): Promise<BrandView | null> {
      const [row] = await store.brandsOfSellers(db, [userId]);
      return row ? brandView(row, payUrl) : null;
    },

    /** The brands of several sellers (the portal lists purchases from any of them), by seller id. */
    async forSellers(userIds: readonly string[]): Promise<Map<string, BrandView>> {
      const rows = await store.brandsOfSellers(db, userIds);
      return new Map(rows.map((row) => [row.user_id, brandView(row, payUrl)]));
    },

    /** The brands of the sellers of these products (buyers' e-mails), by product id. */
    async forProducts(productIds: readonly string[]): Promise<Map<string, BrandView>> {
      const sellers = await store.sellersOfProducts(db, productIds);
      const rows = await store.brandsOfSellers(db, [...sellers.values()]);
      const bySeller = new Map(rows.map((row) => [row.user_id, brandView(row, payUrl)]));
      const byProduct = new Map<string, BrandView>();
      for (const [productId, sellerId] of sellers) {
        const view = bySeller.get(sellerId);
        if (view) byProduct.set(productId, view);
      }
      return byProduct;
    },
  };
}
