/**
 * The seller's accent colour and the colours drawn with it, so that whatever colour a seller
 * picks, text stays readable: words on the accent are black or white, whichever contrasts more
 * (never under 4.5:1, WCAG AA), and the accent used as text on white is darkened until it reads
 * at 4.5:1. Contrast as WCAG 2 defines it, from relative luminance.
 */

/** `#rrggbb`, six hexadecimal digits: the only way a seller writes the colour. */
export const ACCENT_PATTERN = '^#[0-9A-Fa-f]{6}$';

/** The least contrast text must have against its background (WCAG 2, AA, body text). */
export const READABLE_CONTRAST = 4.5;

export interface AccentColours {
  /** The seller's colour, lower case: button backgrounds. */
  accent: string;
  /** Black or white: words on the accent. */
  onAccent: '#000000' | '#ffffff';
  /** The accent as text on a white page (links, outlined buttons), darkened when it is too light. */
  ink: string;
}

const channels = (hex: string): [number, number, number] => [
  Number.parseInt(hex.slice(1, 3), 16),
  Number.parseInt(hex.slice(3, 5), 16),
  Number.parseInt(hex.slice(5, 7), 16),
];

const toHex = (rgb: readonly number[]) =>
  `#${rgb.map((value) => Math.round(value).toString(16).padStart(2, '0')).join('')}`;

/** WCAG 2 relative luminance of `#rrggbb`, from 0 (black) to 1 (white). */
export function luminance(hex: string): number {
  const [r, g, b] = channels(hex).map((value) => {
    const c = value / 255;
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  }) as [number, number, number];
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

/** The contrast ratio of two colours, from 1 (the same) to 21 (black on white). */
export function contrastRatio(a: string, b: string): number {
  const [light, dark] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number];
  return (light + 0.05) / (dark + 0.05);
}

/** The colours pages and e-mails draw from an accent written `#rrggbb`. */
export function accentColours(color: string): AccentColours {
  const accent = color.toLowerCase();
  const onAccent =
    contrastRatio(accent, '#000000') >= contrastRatio(accent, '#ffffff') ? '#000000' : '#ffffff';
  let ink = accent;
  // Darkened a hundredth at a time towards black, which reads at 21:1, so this always ends.
  for (let step = 1; contrastRatio(ink, '#ffffff') < READABLE_CONTRAST; step++) {
    const scale = 1 - step / 100;
    ink = toHex(channels(accent).map((value) => value * scale));
  }
  return { accent, onAccent, ink };
}
