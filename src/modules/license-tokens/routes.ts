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
  purpose: Type.Union([Type.Literal('token'), Type.Literal('offline')], {
    description:
      'token: signs license tokens, replaced by key rotation. offline: signs license files and revocation lists, kept across rotations',
  }),
});

export function registerKeySetRoutes(app: HttpApp, keys: KeyRing): void {
  app.get('/licenses/jwks', {
    config: { auth: 'public', cors: true },
    schema: {
      summary: 'The public keys license tokens, license files and revocation lists are signed with (JWKS)',
      description:
        'Select the key by kid; cache briefly and fetch again on an unknown kid. Ship a copy with software that checks license files offline: its offline key (purpose offline) signs every license file and revocation list, and stays when the token keys rotate.',
      tags: ['licenses'],
      response: { 200: Type.Object({ keys: Type.Array(Jwk) }, { description: 'The key set' }) },
    },
    handler: async (_request, reply) => {
      reply.header('cache-control', `public, max-age=${JWKS_MAX_AGE_SECONDS}, stale-if-error=86400`);
      return keys.jwks();
    },
  });
}
