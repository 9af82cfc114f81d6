import { createHash } from 'node:crypto';
import type { OutputInfo } from 'sharp';
import { AppError } from '../../platform/errors.js';

/**
 * A seller's uploaded logo, made safe to show anyone: only PNG, JPEG or WebP by their magic
 * bytes (never SVG, which can carry script, nor anything a browser might sniff as HTML), decoded
 * within a pixel budget, and re-encoded by libvips (sharp). What is stored and served is that new
 * image: no byte of the upload survives (trailing script, metadata, a second format), and its type
 * is known because we wrote it.
 */

/** The largest upload taken; the route refuses a longer body before reading it. */
export const LOGO_MAX_BYTES = 256 * 1024;
/** A decoded image of more pixels is refused (a small file can claim a huge canvas). */
const MAX_INPUT_PIXELS = 4096 * 4096;
/** The box the logo is scaled down into: twice the size pages and e-mails show it at. */
const BOX = { width: 480, height: 160 };

export type LogoType = 'image/png' | 'image/jpeg';

export interface PreparedLogo {
  bytes: Buffer;
  type: LogoType;
  sha256: string;
  width: number;
  height: number;
}

type Sniffed = 'png' | 'jpeg' | 'webp';

/** The image format the bytes begin with, or null for anything else. */
export function sniffImage(bytes: Uint8Array): Sniffed | null {
  const starts = (signature: number[], at = 0) => signature.every((byte, i) => bytes[at + i] === byte);
  if (starts([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'png';
  if (starts([0xff, 0xd8, 0xff])) return 'jpeg';
  // RIFF <size> WEBP
  if (starts([0x52, 0x49, 0x46, 0x46]) && starts([0x57, 0x45, 0x42, 0x50], 8)) return 'webp';
  return null;
}

const refused = (message: string) =>
  new AppError('validation_failed', `logo: ${message}`, [{ field: 'logo', message }]);

/** What a refused upload looks like, so the message can say what was sent. */
function describe(bytes: Uint8Array): string {
  const head = Buffer.from(bytes.subarray(0, 512)).toString('latin1').trimStart().toLowerCase();
  if (head.includes('<svg'))
    return 'SVG is not accepted (it can carry script); send a PNG, JPEG or WebP image';
  if (head.startsWith('gif8')) return 'GIF is not accepted; send a PNG, JPEG or WebP image';
  return 'must be a PNG, JPEG or WebP image (judged by its content, not its name or Content-Type)';
}

/** The upload checked and re-encoded: PNG stays PNG (WebP becomes PNG, keeping transparency), JPEG stays JPEG. */
export async function prepareLogo(upload: Uint8Array): Promise<PreparedLogo> {
  if (upload.length === 0) throw refused('is empty: send the image file as the request body');
  if (upload.length > LOGO_MAX_BYTES) throw tooLarge();
  const sniffed = sniffImage(upload);
  if (!sniffed) throw refused(describe(upload));
  let output: { data: Buffer; info: OutputInfo };
  // Loaded on the first upload: libvips is not needed to serve anything else, nor by one-shot commands.
  const { default: sharp } = await import('sharp');
  try {
    const image = sharp(upload, { limitInputPixels: MAX_INPUT_PIXELS, failOn: 'error', autoOrient: true });
    const meta = await image.metadata();
    // libvips reads many formats (SVG among them): only the one the magic bytes named goes on.
    if (meta.format !== sniffed) throw refused(describe(upload));
    const scaled = image.resize({ ...BOX, fit: 'inside', withoutEnlargement: true });
    output = await (sniffed === 'jpeg'
      ? scaled.jpeg({ quality: 88, mozjpeg: true })
      : scaled.png({ compressionLevel: 9, palette: false })
    ).toBuffer({ resolveWithObject: true });
  } catch (error) {
    if (error instanceof AppError) throw error;
    const message = error instanceof Error ? error.message : '';
    if (/pixel limit/i.test(message))
      throw refused(`is too large an image: at most ${MAX_INPUT_PIXELS.toLocaleString('en')} pixels`);
    throw refused(`is not a complete ${sniffed.toUpperCase()} image that can be read`);
  }
  return {
    bytes: output.data,
    type: sniffed === 'jpeg' ? 'image/jpeg' : 'image/png',
    sha256: createHash('sha256').update(output.data).digest('hex'),
    width: output.info.width,
    height: output.info.height,
  };
}

/** An upload over LOGO_MAX_BYTES, said with the limit. */
export function tooLarge(): AppError {
  const message = `must be at most ${LOGO_MAX_BYTES / 1024} KB (${LOGO_MAX_BYTES} bytes)`;
  return new AppError('payload_too_large', `logo: ${message}`, [{ field: 'logo', message }]);
}
