import { type AccentColours, accentColours } from './accent.js';
import type { BrandRow } from './store.js';

/**
 * What buyers see of a seller's brand (checkout pages, the portal, e-mails): the name, the logo's
 * address and size, the colours drawn from the accent, and the sites allowed to frame the
 * seller's checkout. Built from the stored row alone; every value in it was validated when set.
 */
export interface BrandView {
  name: string | null;
  logo: {
    /** On the checkout host, with the version that changes with the logo: for its own pages. */
    path: string;
    /** The same, absolute: for e-mails. */
    url: string;
    width: number;
    height: number;
  } | null;
  colours: AccentColours | null;
  overlayOrigins: readonly string[];
}

/** The version a logo's address carries: changes whenever its bytes do. */
export const logoVersion = (sha256: string) => sha256.slice(0, 16);

export const logoPath = (publicId: string, sha256: string) =>
  `/brands/${publicId}/logo?v=${logoVersion(sha256)}`;

export function brandView(row: BrandRow, payUrl: string): BrandView {
  const logo =
    row.logo_sha256 && row.logo_width && row.logo_height
      ? {
          path: logoPath(row.public_id, row.logo_sha256),
          url: `${payUrl}${logoPath(row.public_id, row.logo_sha256)}`,
          width: row.logo_width,
          height: row.logo_height,
        }
      : null;
  return {
    name: row.display_name,
    logo,
    colours: row.accent_color ? accentColours(row.accent_color) : null,
    overlayOrigins: row.overlay_origins,
  };
}

/**
 * The custom properties the checkout stylesheet's branded rules read (`--brand`, `--on-brand`,
 * `--brand-ink`), for the elements `selector` names. Colours only, each `#rrggbb` as validated,
 * so the text is safe in a style element; pages allow it by its hash.
 */
export function brandCss(selector: string, colours: AccentColours): string {
  return `${selector}{--brand:${colours.accent};--on-brand:${colours.onAccent};--brand-ink:${colours.ink}}`;
}
