import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import Type from 'typebox';
import { AppError } from '../../platform/errors.js';
import { cookieChallenge } from '../../platform/http/challenges.js';
import type { HttpApp } from '../../platform/http/create-http-app.js';
import { fromAnotherSite, registerFormRoutes } from '../../platform/http/forms.js';
import { perMinute } from '../../platform/http/rate-limit.js';
import { challengeHeader, errorBody, seeOther } from '../../platform/http/responses.js';
import { textResponse, Uuid } from '../../platform/http/schemas.js';
import type { WindowCounter } from '../../platform/http/window-counter.js';
import { inlineStyleSources, type Page } from '../checkout/index.js';
import { PORTAL_CSS } from './assets.js';
import { type PortalOutcome, problemPage } from './pages.js';
import { DONE_NOTICES, type PortalService } from './service.js';
import { SESSION_COOKIE } from './sessions.js';

/** Sign-in links mailed to one address per hour, however many client addresses ask. */
export const LINKS_PER_ADDRESS_PER_HOUR = 5;

/**
 * Our own stylesheets (and the page's own style element, by hash: sellers' colours), no script at
 * all, forms posting to this host only, never framed.
 */
const pagePolicy = (page: Page) =>
  [
    "default-src 'none'",
    `style-src 'self'${inlineStyleSources(page)}`,
    "img-src 'self' data:",
    "form-action 'self'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
  ].join('; ');

const Csrf = Type.String({ maxLength: 128, description: 'The session’s form token (from the page)' });
const PortalQuery = Type.Object(
  {
    done: Type.Optional(
      Type.Union(
        Object.keys(DONE_NOTICES).map((key) => Type.Literal(key)),
        { description: 'The action just finished, said on the page' },
      ),
    ),
  },
  { additionalProperties: false },
);
const SignInForm = Type.Object(
  { email: Type.Optional(Type.String({ maxLength: 320 })) },
  { additionalProperties: false },
);
const TokenParams = Type.Object(
  { token: Type.String({ minLength: 1, maxLength: 128, description: 'The sign-in link’s token' }) },
  { additionalProperties: false },
);
const EmptyForm = Type.Object({}, { additionalProperties: false });
const CsrfForm = Type.Object({ csrf: Type.Optional(Csrf) }, { additionalProperties: false });
const LicenseParams = Type.Object({ licenseId: Uuid }, { additionalProperties: false });
const SubscriptionParams = Type.Object({ subscriptionId: Uuid }, { additionalProperties: false });
const DownloadParams = Type.Object({ licenseId: Uuid, artifactId: Uuid }, { additionalProperties: false });
const ReleaseForm = Type.Object(
  { csrf: Type.Optional(Csrf), hwuid: Type.Optional(Type.String({ maxLength: 200 })) },
  { additionalProperties: false },
);
const LicenseFileForm = Type.Object(
  {
    csrf: Type.Optional(Csrf),
    request: Type.Optional(
      Type.String({ maxLength: 8192, description: 'The activation request the offline machine wrote' }),
    ),
  },
  { additionalProperties: false },
);

const page = (description: string) => textResponse('text/html', description);
const pageOrErrorBody = (description: string) => ({
  description,
  content: {
    'text/html': { schema: Type.String() },
    'application/json': {
      schema: errorBody({ validation_failed: 'a form or path value is invalid', invalid_json: 'never sent' }),
    },
  },
});
/** What a form post answers when the browser says it came from another site (login CSRF too). */
const CROSS_SITE_FORM =
  'Sent from a page of another site (Sec-Fetch-Site or Origin): refused, nothing changed';
/** What a 401 page asks for: the session cookie, got by signing in at the portal's front page. */
const SESSION_CHALLENGE = cookieChallenge({
  realm: 'portal',
  signInPath: '/portal',
  cookieName: SESSION_COOKIE,
});
const signedInForm = {
  401: {
    ...page('Not signed in (or the session ended): a page to sign in again'),
    headers: challengeHeader(`\`${SESSION_CHALLENGE}\``),
  },
  403: page(
    'The form’s token does not belong to this session (CSRF), or the form was sent from another site (Sec-Fetch-Site or Origin)',
  ),
};

function sessionToken(request: FastifyRequest): string | undefined {
  const header = request.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const [name, ...value] = part.trim().split('=');
    if (name === SESSION_COOKIE) return value.join('=') || undefined;
  }
  return undefined;
}

function send(reply: FastifyReply, outcome: PortalOutcome) {
  reply
    .header('cache-control', 'no-store')
    .header('referrer-policy', 'no-referrer')
    .header('x-content-type-options', 'nosniff');
  if ('download' in outcome) {
    return reply
      .header('content-type', 'application/octet-stream')
      .header('content-disposition', `attachment; filename="${outcome.download.filename}"`)
      .send(outcome.download.body);
  }
  if (outcome.cookie) reply.header('set-cookie', outcome.cookie);
  if ('status' in outcome && outcome.status === 401) reply.header('www-authenticate', SESSION_CHALLENGE);
  if ('redirect' in outcome) return reply.redirect(outcome.redirect, 303);
  return reply
    .status(outcome.status)
    .header('content-type', 'text/html; charset=utf-8')
    .header('content-security-policy', pagePolicy(outcome.page))
    .send(outcome.page.text);
}

/**
 * Counts sign-in requests per e-mail address (hashed, so the counter store keeps no address).
 * After validation: a malformed request changes nothing, so it uses up no one's links.
 */
function limitPerAddress(counter: WindowCounter): preHandlerAsyncHookHandler {
  return async (request, reply) => {
    const email = (request.body as { email?: unknown } | undefined)?.email;
    if (typeof email !== 'string' || email.trim() === '') return;
    const name = createHash('sha256').update(email.trim().toLowerCase()).digest('hex');
    const [hits] = await counter.hit([`portal-sign-in:${name}`], 3_600_000);
    if (!hits || hits.count <= LINKS_PER_ADDRESS_PER_HOUR) return;
    const seconds = Math.ceil(hits.resetMs / 1000);
    reply.header('retry-after', seconds);
    throw new AppError('rate_limited', `Too many sign-in links for this address; retry in ${seconds} s`);
  };
}

/**
 * The buyer portal's pages on the checkout host (docs/buyer-portal.md). Server-rendered forms; the
 * session is an HttpOnly cookie on /portal, and every form that changes something carries the
 * session's CSRF token.
 */
export function registerPortalRoutes(
  app: HttpApp,
  portal: PortalService,
  limits: { rateLimit: number; counter: WindowCounter },
): void {
  const rateLimit = perMinute(limits.rateLimit);

  app.get('/portal/assets/portal.css', {
    config: { auth: 'public' },
    schema: {
      summary: 'The buyer portal’s stylesheet',
      tags: ['portal'],
      response: { 200: textResponse('text/css', 'portal.css') },
    },
    handler: async (_request, reply) => {
      reply.header('content-type', 'text/css; charset=utf-8').header('cache-control', 'public, max-age=3600');
      return PORTAL_CSS;
    },
  });

  app.get('/portal', {
    config: { auth: 'public' },
    schema: {
      summary: 'The buyer portal',
      description:
        'For buyers’ browsers: their licenses, devices, subscriptions and orders when signed in (session cookie), the sign-in form otherwise.',
      tags: ['portal'],
      querystring: PortalQuery,
      response: { 200: page('The buyer’s purchases, or the sign-in form') },
    },
    handler: async (request, reply) =>
      send(reply, await portal.home(sessionToken(request), request.query.done)),
  });

  app.get('/portal/sign-in/:token', {
    config: { auth: 'public', rateLimit, secretInPath: true },
    schema: {
      summary: 'Open a sign-in link',
      description:
        'What the mailed link opens: a Sign in button (posting to the same address) while the link is usable. Opening it does not use it up, so mail scanners that follow links do no harm.',
      tags: ['portal'],
      params: TokenParams,
      response: {
        200: page('The Sign in button'),
        400: pageOrErrorBody(
          'The link was used already, has expired or is unknown (a page offering a new one)',
        ),
      },
    },
    handler: async (request, reply) => send(reply, await portal.openLink(request.params.token)),
  });

  const refuse = (reply: FastifyReply) =>
    send(reply, {
      status: 403,
      page: problemPage('Sent from another site', 'This form can only be sent from the portal’s own pages.'),
    });

  // A link, not a form: it changes nothing (a link is made, nothing is stored), and a redirect to
  // the API host after a form post would meet the page's form-action 'self'. Followed from another
  // site's page it is refused all the same, so no page elsewhere starts a buyer's download.
  app.get('/portal/licenses/:licenseId/downloads/:artifactId', {
    config: { auth: 'public', rateLimit },
    schema: {
      summary: 'Download a file of a release one of the buyer’s licenses may have',
      description:
        'Answers 303 to a fresh download link (an hour long, as POST /v1/releases/download makes) once the release rules allow the license this file: its status and expiry (maintain_access: releases published before it), the channels its channel: entitlements open and the entitlements the release requires. Device places and seats do not apply: downloading an installer is not running the software. Refused with 403 when followed from another site’s page.',
      tags: ['portal'],
      params: DownloadParams,
      response: {
        303: seeOther('On to the file’s signed link on the core API host'),
        401: signedInForm[401],
        403: page('Followed from a page of another site (Sec-Fetch-Site or Origin): nothing was made'),
        404: page(
          'No license of the buyer’s has this id, or the file is not one of a published release of its app',
        ),
        409: page(
          'The portal, saying why the license may not download this file now (data-code: license_suspended, license_revoked, license_expired, channel_not_granted, feature_not_granted)',
        ),
      },
    },
    handler: async (request, reply) => {
      if (fromAnotherSite(request)) {
        return send(reply, {
          status: 403,
          page: problemPage('Followed from another site', 'Downloads start from the portal’s own page.'),
        });
      }
      return send(
        reply,
        await portal.download(sessionToken(request), request.params.licenseId, request.params.artifactId),
      );
    },
  });
  registerFormRoutes(app, refuse, (form) => {
    form.post('/portal/sign-in', {
      config: { auth: 'public', rateLimit },
      preHandler: limitPerAddress(limits.counter),
      schema: {
        summary: 'Ask for a sign-in link',
        description: `Mails a one-time sign-in link (valid 15 minutes) when purchases were made with the address, and answers the same page whether or not any were. At most ${LINKS_PER_ADDRESS_PER_HOUR} requests per address per hour.`,
        tags: ['portal'],
        body: SignInForm,
        consumes: ['application/x-www-form-urlencoded'],
        response: {
          200: page('“Check your e-mail”, whatever the address'),
          403: page(CROSS_SITE_FORM),
          422: page('The form again: the address is not an e-mail address'),
        },
      },
      handler: async (request, reply) => send(reply, await portal.requestLink(request.body.email)),
    });

    form.post('/portal/sign-in/:token', {
      config: { auth: 'public', rateLimit, secretInPath: true },
      schema: {
        summary: 'Sign in with a link',
        description:
          'Uses the link (once: of two clicks at once, one signs in) and sets the session cookie (HttpOnly, SameSite=Lax, path /portal).',
        tags: ['portal'],
        params: TokenParams,
        body: Type.Optional(EmptyForm),
        consumes: ['application/x-www-form-urlencoded'],
        response: {
          303: seeOther('Signed in: on to the portal, with the session cookie'),
          403: page(CROSS_SITE_FORM),
          400: pageOrErrorBody(
            'The link was used already, has expired or is unknown (a page offering a new one)',
          ),
        },
      },
      handler: async (request, reply) => send(reply, await portal.signIn(request.params.token)),
    });

    form.post('/portal/sign-out', {
      config: { auth: 'public' },
      schema: {
        summary: 'Sign out of the buyer portal',
        description: 'Ends the session (the server forgets it) and clears the cookie.',
        tags: ['portal'],
        body: CsrfForm,
        consumes: ['application/x-www-form-urlencoded'],
        response: {
          303: seeOther('Signed out: on to the sign-in form'),
          ...signedInForm,
        },
      },
      handler: async (request, reply) =>
        send(reply, await portal.signOut(sessionToken(request), request.body.csrf)),
    });

    form.post('/portal/licenses/:licenseId/devices/release', {
      config: { auth: 'public', rateLimit },
      schema: {
        summary: 'Release a device of one of the buyer’s licenses',
        description:
          'Frees the device’s place, as the seller’s device release does (the next device can activate), within the rules for buyers: not while an offline license file of the device is valid, and no more releases per license than the product allows in its period. A refusal changes nothing.',
        tags: ['portal'],
        params: LicenseParams,
        body: ReleaseForm,
        consumes: ['application/x-www-form-urlencoded'],
        response: {
          303: seeOther('Released: back to the portal'),
          ...signedInForm,
          404: page('No license of the buyer’s has this id, or no such device is bound to it'),
          409: page(
            'The portal, saying why and from when the release is possible: an offline license file holds the device (data-code device_bound_offline), or the product’s release allowance is used up (release_limit_reached)',
          ),
        },
      },
      handler: async (request, reply) =>
        send(
          reply,
          await portal.releaseDevice(sessionToken(request), request.params.licenseId, request.body),
        ),
    });

    form.post('/portal/licenses/:licenseId/seats/release', {
      config: { auth: 'public', rateLimit },
      schema: {
        summary: 'Release a seat of one of the buyer’s floating licenses',
        description:
          'Frees the seat the device holds at once, as the seller’s seat release does, with `license.seat.released` (reason `buyer`). No release allowance applies: a seat lapses by itself when its software stops, and the license never lends more than its seats at once. The device takes a seat again at its next checkout while one is free.',
        tags: ['portal'],
        params: LicenseParams,
        body: ReleaseForm,
        consumes: ['application/x-www-form-urlencoded'],
        response: {
          303: seeOther('Released: back to the portal'),
          ...signedInForm,
          404: page('No license of the buyer’s has this id, or the device holds no live seat on it'),
        },
      },
      handler: async (request, reply) =>
        send(reply, await portal.releaseSeat(sessionToken(request), request.params.licenseId, request.body)),
    });

    form.post('/portal/licenses/:licenseId/license-file', {
      config: { auth: 'public', rateLimit },
      schema: {
        summary: 'Download a license file for an offline machine',
        description:
          'Binds the device of the pasted activation request to one of the buyer’s licenses, exactly like the seller’s offline activation, and answers the signed license file to download. The file is valid for the product’s portalLicenseFileDays (30 by default, never past the license), and the device cannot be released here until it expires.',
        tags: ['portal'],
        params: LicenseParams,
        body: LicenseFileForm,
        consumes: ['application/x-www-form-urlencoded'],
        response: {
          200: textResponse(
            'application/octet-stream',
            'The signed license file (compact JWS) as a download',
          ),
          ...signedInForm,
          404: page('No license of the buyer’s has this id'),
          409: page('The portal, saying why: no free device place, the license is not active, or it floats'),
          422: page('The portal, saying why: the activation request is malformed or for another key'),
        },
      },
      handler: async (request, reply) =>
        send(reply, await portal.licenseFile(sessionToken(request), request.params.licenseId, request.body)),
    });

    form.post('/portal/subscriptions/:subscriptionId/cancel', {
      config: { auth: 'public', rateLimit },
      schema: {
        summary: 'Cancel one of the buyer’s subscriptions',
        description:
          'The seller’s cancel: no renewal is charged any more, subscription.canceled goes to the merchant webhook, and the license keeps its paid period.',
        tags: ['portal'],
        params: SubscriptionParams,
        body: CsrfForm,
        consumes: ['application/x-www-form-urlencoded'],
        response: {
          303: seeOther('Canceled: back to the portal'),
          ...signedInForm,
          404: page('No subscription of the buyer’s has this id'),
          409: page('The portal, saying the subscription is already canceled'),
        },
      },
      handler: async (request, reply) =>
        send(
          reply,
          await portal.cancelSubscription(sessionToken(request), request.params.subscriptionId, request.body),
        ),
    });
  });
}
