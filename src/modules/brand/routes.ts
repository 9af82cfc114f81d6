import type { FastifyReply } from 'fastify';
import { AppError, notFound } from '../../platform/errors.js';
import type { HttpApp } from '../../platform/http/create-http-app.js';
import { principalOf } from '../../platform/http/principal.js';
import { noContent } from '../../platform/http/responses.js';
import { LOGO_MAX_BYTES, tooLarge } from './logo.js';
import { Brand, BrandUpdate, LogoParams, LogoQuery } from './schemas.js';
import type { BrandService } from './service.js';

const LOGO_TYPES = ['image/png', 'image/jpeg', 'image/webp', 'application/octet-stream'];
const unsupportedType = new AppError(
  'unsupported_media_type',
  `logo: send the image with Content-Type ${LOGO_TYPES.join(', ')} (SVG and other types are not accepted)`,
  [{ field: 'logo', message: `must be sent as ${LOGO_TYPES.join(', ')}` }],
);

/** The seller's own brand settings (core host, a user token: they are the account's, not an app's). */
export function registerBrandRoutes(app: HttpApp, brands: BrandService): void {
  app.get('/brand', {
    config: { auth: 'user' },
    schema: {
      summary: 'Your brand',
      description:
        'What buyers see of you on checkout pages, in the buyer portal and in their e-mails (name, logo, accent colour), and the sites allowed to open your checkout in the overlay. Empty fields until you set them.',
      tags: ['brand'],
      response: { 200: Brand },
    },
    handler: (request) => brands.get(principalOf(request)),
  });

  app.put('/brand', {
    config: { auth: 'user' },
    schema: {
      summary: 'Change your brand',
      description:
        'Each field sent replaces the stored one; null removes a name or colour. overlayOrigins lists exact https origins (no path, no wildcard): only those sites may frame your checkout pages.',
      tags: ['brand'],
      body: BrandUpdate,
      response: { 200: Brand },
    },
    handler: (request) => brands.update(principalOf(request), request.body),
  });

  // The upload's body is the image itself, read whole up to the limit; its declared type is not
  // trusted (the content is), so any of the image types or octet-stream is taken.
  app.register(async (plugin) => {
    const scope = plugin as unknown as HttpApp;
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser(
      LOGO_TYPES,
      { parseAs: 'buffer', bodyLimit: LOGO_MAX_BYTES },
      (_r, body, done) => done(null, body),
    );
    scope.addContentTypeParser('*', (_request, _payload, done) => done(unsupportedType));
    scope.put('/brand/logo', {
      config: { auth: 'user' },
      // A declared length over the limit is refused before a byte is read, naming the limit.
      preParsing: async (request) => {
        if (Number(request.headers['content-length'] ?? 0) > LOGO_MAX_BYTES) throw tooLarge();
      },
      schema: {
        summary: 'Upload your logo (the image file as the body)',
        description: `A PNG, JPEG or WebP image of at most ${LOGO_MAX_BYTES / 1024} KB, sent as the body (Content-Type image/png, image/jpeg, image/webp or application/octet-stream). It is judged by its content: SVG and anything else is refused. It is re-encoded (PNG, or JPEG for a JPEG) and scaled into 480 × 160 pixels; what is stored and served is that copy.`,
        tags: ['brand'],
        response: { 200: Brand },
      },
      handler: (request) =>
        brands.replaceLogo(principalOf(request), (request.body as Buffer | undefined) ?? Buffer.alloc(0)),
    });
  });

  app.delete('/brand/logo', {
    config: { auth: 'user' },
    schema: {
      summary: 'Remove your logo',
      tags: ['brand'],
      response: { 200: Brand },
    },
    handler: (request) => brands.removeLogo(principalOf(request)),
  });
}

/**
 * A seller's logo for anyone, by the brand's public id: checkout pages, the portal and buyers'
 * e-mails show it. Served on both hosts; only ever the re-encoded copy, typed as we wrote it.
 */
export function registerLogoRoute(app: HttpApp, brands: Pick<BrandService, 'logo'>): void {
  app.get('/brands/:brandId/logo', {
    config: { auth: 'public' },
    schema: {
      summary: 'A seller’s logo',
      description:
        'The image as re-encoded on upload. With v (as pages and e-mails link it) naming the current logo, it may be kept for a year; otherwise it is revalidated (ETag).',
      tags: ['brand'],
      params: LogoParams,
      querystring: LogoQuery,
      response: {
        200: {
          description: 'The logo',
          content: {
            'image/png': { schema: { type: 'string', format: 'binary' } },
            'image/jpeg': { schema: { type: 'string', format: 'binary' } },
          },
        },
        304: noContent('The copy the client holds (If-None-Match) is current'),
      },
      errors: { not_found: 'no logo under this id (none uploaded, removed, or the account is closed)' },
    },
    handler: async (request, reply) =>
      sendLogo(
        reply,
        await brands.logo(request.params.brandId, request.query.v),
        request.headers['if-none-match'],
      ),
  });
}

function sendLogo(
  reply: FastifyReply,
  logo: Awaited<ReturnType<BrandService['logo']>>,
  ifNoneMatch: string | undefined,
) {
  reply
    // Never run as a document, never sniffed as anything else, embeddable by any page or mail.
    .header('x-content-type-options', 'nosniff')
    .header('content-security-policy', "default-src 'none'; sandbox")
    .header('cross-origin-resource-policy', 'cross-origin');
  if (!logo) throw notFound('Logo');
  reply
    .header('etag', logo.etag)
    .header('cache-control', logo.current ? 'public, max-age=31536000, immutable' : 'public, no-cache');
  if (ifNoneMatch?.split(',').some((tag) => tag.trim() === logo.etag)) return reply.status(304).send();
  return reply.header('content-type', logo.type).send(logo.bytes);
}
