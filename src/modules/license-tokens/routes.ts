import Type from 'typebox';
import type { HttpApp } from '../../platform/http/create-http-app.js';
import { JWKS_MAX_AGE_SECONDS, type KeyRing } from './key-ring.js';

const Jwk = Type.Object({
  kty: Type.String(),
  n: Type.String(),
  e: Type.String(),
  kid: Type.String(),
  alg: Type.String(),
  use: Type.String(),
});

export function registerKeySetRoutes(app: HttpApp, keys: KeyRing): void {
  app.get('/licenses/jwks', {
    config: { auth: 'public', cors: true },
    schema: {
      summary: 'The public keys license tokens, license files and revocation lists are signed with (JWKS)',
      description: 'Select the key by kid; cache briefly and fetch again on an unknown kid.',
      tags: ['licenses'],
      response: { 200: Type.Object({ keys: Type.Array(Jwk) }, { description: 'The key set' }) },
    },
    handler: async (_request, reply) => {
      reply.header('cache-control', `public, max-age=${JWKS_MAX_AGE_SECONDS}, stale-if-error=86400`);
      return keys.jwks();
    },
  });
}
