import type { HttpApp } from '../../platform/http/create-http-app.js';
import { type IdempotentAnswer, idempotentAnswer } from '../../platform/http/idempotency.js';
import { principalOf } from '../../platform/http/principal.js';
import { overNameLimit, perMinute } from '../../platform/http/rate-limit.js';
import { AppVersionHeader, clientCallOf } from '../timeline/index.js';
import { verifyKeyLimitCeiling } from './key-rate-limit.js';
import { verificationLimitKey } from './license-key.js';
import {
  CheckinResult,
  IntrospectBody,
  IntrospectResult,
  RevokeTokenBody,
  RevokeTokenResult,
  SeatBody,
  UsageBody,
  UsageResult,
  type UsageResultType,
  ValidateHardwareBody,
  VerificationResult,
  VerifyBody,
} from './schemas.js';
import type { Verification } from './verification.js';

/** Answers about a key are for the caller alone and change: no cache may keep them. */
const NO_STORE = 'no-store';

/** The routes client software and sellers' backends call about keys and tokens. */
export function registerVerificationRoutes(
  app: HttpApp,
  verification: Verification,
  limits: { verifyRateLimit: number; verifyKeyRateLimit: number },
): void {
  // Per license key too, however it is typed, so one key cannot be hammered from many addresses.
  // A floating license's seats raise its limit (key-rate-limit.ts): past the plain limit, the
  // verification judges once it has looked the license up.
  const perKey = perMinute(limits.verifyRateLimit, {
    max: limits.verifyKeyRateLimit,
    ceiling: verifyKeyLimitCeiling(limits.verifyKeyRateLimit),
    name: (request) => verificationLimitKey(request.body),
  });
  const perAddress = perMinute(limits.verifyRateLimit);

  app.post('/licenses/verify', {
    config: { auth: 'public', cors: true, rateLimit: perKey, accessLog: 'quiet' },
    schema: {
      summary: 'Verify a license key',
      description:
        'For client software. A key that does not verify still answers 200, with valid false and a code saying why.',
      tags: ['licenses'],
      body: VerifyBody,
      headers: AppVersionHeader,
      response: { 200: VerificationResult },
    },
    // Not async: an answer from memory is sent at once; a promise (a read, a token) when it settles.
    handler: (request, reply) => {
      reply.header('cache-control', NO_STORE);
      return verification.verify(request.body, overNameLimit(request, reply), clientCallOf(request));
    },
  });

  app.post('/licenses/validate-hardware', {
    config: { auth: 'public', cors: true, rateLimit: perKey, accessLog: 'quiet' },
    schema: {
      summary: 'Verify a license key on a device, and get a license token',
      description:
        'Binds the device when a seat is free. When license tokens are on, a valid answer carries a signed token for offline checks.',
      tags: ['licenses'],
      body: ValidateHardwareBody,
      headers: AppVersionHeader,
      response: { 200: VerificationResult },
    },
    handler: (request, reply) => {
      reply.header('cache-control', NO_STORE);
      return verification.validateHardware(
        request.body,
        overNameLimit(request, reply),
        clientCallOf(request),
      );
    },
  });

  app.post('/licenses/checkout', {
    config: { auth: 'public', cors: true, rateLimit: perKey, accessLog: 'quiet' },
    schema: {
      summary: 'Take or keep a seat on a floating license',
      description:
        'Takes a seat for the device while one is free, or renews the lease of the seat it holds (call it again as a heartbeat before lease_expires_at). Answers like verify; no free seat is valid false with no_seat_available.',
      tags: ['licenses'],
      body: SeatBody,
      headers: AppVersionHeader,
      response: { 200: VerificationResult },
    },
    handler: async (request, reply) =>
      reply
        .header('cache-control', NO_STORE)
        .send(
          await verification.checkout(request.body, overNameLimit(request, reply), clientCallOf(request)),
        ),
  });

  app.post('/licenses/usage', {
    config: { auth: 'public', cors: true, rateLimit: perKey, accessLog: 'quiet', idempotent: true },
    schema: {
      summary: 'Consume uses of a license’s quota',
      description:
        'For client software metering what a license allows (exports, API calls, builds). Consumes `amount` uses of the current period, all or none: concurrent calls never take the count past the quota. A call that consumes nothing still answers 200, with consumed false and a code (usage_exhausted when the quota would be passed). Send an Idempotency-Key so a retried call counts once.',
      tags: ['licenses'],
      body: UsageBody,
      headers: AppVersionHeader,
      response: { 200: UsageResult },
    },
    handler: async (request, reply) =>
      reply
        .header('cache-control', NO_STORE)
        .send(
          await verification.consumeUsage(
            request.body,
            idempotentAnswer(request) as IdempotentAnswer<UsageResultType> | undefined,
            overNameLimit(request, reply),
            clientCallOf(request),
          ),
        ),
  });

  app.post('/licenses/checkin', {
    config: { auth: 'public', cors: true, rateLimit: perKey, accessLog: 'quiet' },
    schema: {
      summary: 'Give a floating license’s seat back',
      description:
        'Frees the device’s seat at once. A device holding no live seat answers released false with seat_not_held.',
      tags: ['licenses'],
      body: SeatBody,
      response: { 200: CheckinResult },
    },
    handler: async (request, reply) =>
      reply
        .header('cache-control', NO_STORE)
        .send(await verification.checkin(request.body, overNameLimit(request, reply))),
  });

  app.post('/licenses/introspect', {
    config: { auth: 'public', cors: true, rateLimit: perAddress },
    schema: {
      summary: 'Check a license token against the live license',
      description:
        'Verifies the signature and claims, then answers the license’s status now (active false once revoked).',
      tags: ['licenses'],
      body: IntrospectBody,
      response: { 200: IntrospectResult },
    },
    handler: async (request, reply) =>
      reply.header('cache-control', NO_STORE).send(await verification.introspect(request.body.license_token)),
  });

  app.post('/licenses/revoke-token', {
    config: { auth: 'seller' },
    schema: {
      summary: 'Revoke one issued license token',
      tags: ['licenses'],
      body: RevokeTokenBody,
      response: { 200: RevokeTokenResult },
      errors: { not_found: 'no unexpired token of yours has this jti' },
    },
    handler: (request) => verification.revokeToken(principalOf(request), request.body.jti),
  });
}
