import type { HttpApp } from '../../platform/http/create-http-app.js';
import { principalOf } from '../../platform/http/principal.js';
import { APP_SCOPED } from '../../platform/http/responses.js';
import { TimelinePage, TimelineParams, TimelineQuery } from './schemas.js';
import type { TimelineService } from './service.js';

export function registerTimelineRoutes(app: HttpApp, timeline: TimelineService): void {
  app.get('/apps/:appId/licenses/:licenseId/events', {
    config: { auth: 'seller' },
    schema: {
      summary: 'Read a license’s timeline',
      description:
        'What happened to the license, newest first: every verification’s answer (with the device, the client’s address as the app’s `clientAddresses` setting keeps it, and the `X-App-Version` the client sent), activations and releases, seats, usage, check-ins, status changes with who made them, and the e-mails and webhook events about it. Verifications appear once their node has written its batch (within `VERIFICATION_FLUSH_MS`); a repeat of a call written less than a minute ago is written when that minute is over, counted in `repeats`. Entries are kept `LICENSE_EVENTS_RETENTION_DAYS` days. Page with `nextCursor`.',
      tags: ['licenses'],
      params: TimelineParams,
      querystring: TimelineQuery,
      response: { 200: TimelinePage },
      errors: { ...APP_SCOPED, not_found: 'the app or license does not exist, or is another seller’s' },
    },
    handler: (request) =>
      timeline.page(principalOf(request), request.params.appId, request.params.licenseId, request.query),
  });
}
