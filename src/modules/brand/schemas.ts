import Type from 'typebox';
import { Nullable, NullableTimestamp, Uuid } from '../../platform/http/schemas.js';
import { ACCENT_PATTERN } from './accent.js';
import { MAX_OVERLAY_ORIGINS } from './overlay-origins.js';

export const DISPLAY_NAME_MAX = 80;

const DisplayName = Type.String({
  minLength: 1,
  maxLength: DISPLAY_NAME_MAX,
  // Visible text on one line: no control characters (line breaks, tabs, escapes).
  pattern: '^[^\\u0000-\\u001f\\u007f]*$',
  errorMessage: `must be 1 to ${DISPLAY_NAME_MAX} characters on one line`,
  description: 'The name buyers see on checkout pages, in the portal and in their e-mails',
});

const AccentColor = Type.String({
  pattern: ACCENT_PATTERN,
  errorMessage: 'must be a colour written #rrggbb (six hexadecimal digits), such as #3a4bdb',
  description:
    'Buttons and links of the checkout pages; text on it is black or white, whichever reads better',
});

const OverlayOrigin = Type.String({
  minLength: 1,
  maxLength: 200,
  description: 'An exact origin (https://shop.example.com): scheme, host and port, no path or wildcard',
});

/** The brand's settings: each field given replaces the stored one; null clears it. */
export const BrandUpdate = Type.Object(
  {
    displayName: Type.Optional(Nullable(DisplayName)),
    accentColor: Type.Optional(Nullable(AccentColor)),
    overlayOrigins: Type.Optional(
      Type.Array(OverlayOrigin, {
        maxItems: MAX_OVERLAY_ORIGINS,
        uniqueItems: true,
        description: 'The sites allowed to open the checkout in the overlay (to frame its pages)',
      }),
    ),
  },
  { additionalProperties: false, minProperties: 1 },
);

/** The brand as its seller reads it: an allow-list (the logo's bytes are at `logo.url`). */
export const Brand = Type.Object({
  /** What the logo's public address names; null until the brand is first set. */
  id: Nullable(Uuid),
  displayName: Nullable(Type.String()),
  accentColor: Nullable(Type.String({ description: '#rrggbb' })),
  /** Chosen for the accent: black or white, whichever contrasts more. */
  accentTextColor: Nullable(Type.String({ description: '#000000 or #ffffff' })),
  logo: Nullable(
    Type.Object({
      url: Type.String({ description: 'Its address on the checkout host; changes when the logo does' }),
      contentType: Type.String({ description: 'image/png or image/jpeg, as re-encoded' }),
      width: Type.Integer(),
      height: Type.Integer(),
      bytes: Type.Integer(),
      sha256: Type.String(),
    }),
  ),
  overlayOrigins: Type.Array(Type.String()),
  /** The script a seller's site loads to open the overlay. */
  overlayScriptUrl: Type.String(),
  updatedAt: NullableTimestamp,
});

export const LogoParams = Type.Object({ brandId: Uuid }, { additionalProperties: false });
export const LogoQuery = Type.Object(
  {
    v: Type.Optional(
      Type.String({
        maxLength: 64,
        description:
          'The logo version pages link with: when it is the current one, the answer may be kept a year',
      }),
    ),
  },
  { additionalProperties: false },
);
