import type { HttpApp } from './http-app.js';
import { textResponse } from './schemas.js';

/**
 * The service's icon, a key on a blue tile, drawn in SVG so one small file serves every size.
 * It carries no script or reference to anything else, and never changes with a deploy's data.
 */
export const FAVICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">\
<rect width="32" height="32" rx="7" fill="#1f5fbf"/>\
<circle cx="11" cy="16" r="5.5" fill="none" stroke="#fff" stroke-width="3"/>\
<path d="M16.5 16H27M22.5 16v4.5M26.5 16v3.5" fill="none" stroke="#fff" stroke-width="3" stroke-linecap="round"/>\
</svg>
`;

/** Browsers ask for the icon on every page; a month in their cache spares the host the asking. */
const CACHE_CONTROL = 'public, max-age=2592000';

/**
 * The icon at the host's root: /favicon.svg, which the pages link, and /favicon.ico, which
 * browsers try by themselves (an SVG there as well: no page is left with a 404 in its console).
 */
export function registerFavicon(app: HttpApp): void {
  for (const path of ['/favicon.svg', '/favicon.ico']) {
    app.get(path, {
      config: { auth: 'public' },
      schema: {
        tags: ['icon'],
        summary: path === '/favicon.svg' ? 'The icon pages show' : 'The icon, where browsers look by default',
        response: { 200: textResponse('image/svg+xml', 'The icon (SVG)') },
      },
      handler: async (_request, reply) => {
        reply
          .header('content-type', 'image/svg+xml')
          .header('cache-control', CACHE_CONTROL)
          .header('x-content-type-options', 'nosniff');
        return FAVICON_SVG;
      },
    });
  }
}
