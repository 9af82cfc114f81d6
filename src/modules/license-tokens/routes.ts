import Type from 'typebox';
import type { HttpApp } from '../../platform/http/create-http-app.js';
import { JWKS_MAX_AGE_SECONDS, type KeyRing } from './key-ring.js';

const Purpose = Type.Union([Type.Literal('token'), Type.Literal('offline')], {
  description:
    'token: signs license tokens, replaced by key rotation. offline: signs license files and revocation lists, kept across rotations',
});
const Use = Type.Literal('sig');

const RsaJwk = Type.Object(
  {
    kty: Type.Literal('RSA'),
    n: Type.String({ description: 'Modulus (base64url)' }),
    e: Type.String({ description: 'Public exponent (base64url)' }),
    kid: Type.String({ description: 'Key id (RFC 7638 thumbprint), the kid of the JWS header' }),
    alg: Type.Literal('RS256', { description: 'The only algorithm this key verifies' }),
    use: Use,
    purpose: Purpose,
  },
  { title: 'RsaJwk', description: 'An RSA key: signs for apps whose tokenAlgorithm is RS256' },
);

const Ed25519Jwk = Type.Object(
  {
    kty: Type.Literal('OKP'),
    crv: Type.Literal('Ed25519'),
    x: Type.String({ description: 'Public key (base64url)' }),
    kid: Type.String({ description: 'Key id (RFC 7638 thumbprint), the kid of the JWS header' }),
    alg: Type.Literal('EdDSA', { description: 'The only algorithm this key verifies' }),
    use: Use,
    purpose: Purpose,
  },
  { title: 'Ed25519Jwk', description: 'An Ed25519 key: signs for apps whose tokenAlgorithm is EdDSA' },
);

export function registerKeySetRoutes(app: HttpApp, keys: KeyRing): void {
  app.get('/licenses/jwks', {
    config: { auth: 'public', cors: true },
    schema: {
      summary: 'The public keys license tokens, license files and revocation lists are signed with (JWKS)',
      description:
        'Select the key by kid and verify with that key’s alg only (RS256 for an RSA key, EdDSA for an Ed25519 key: the app’s tokenAlgorithm decides which signs); cache briefly and fetch again on an unknown kid. Ship a copy with software that checks license files offline: its offline keys (purpose offline) sign every license file and revocation list, and stay when the token keys rotate.',
      tags: ['licenses'],
      response: {
        200: Type.Object(
          { keys: Type.Array(Type.Union([RsaJwk, Ed25519Jwk])) },
          {
            description:
              'The key set: an RSA and an Ed25519 key of each purpose, and keys a rotation replaced until what they signed has expired',
          },
        ),
      },
    },
    handler: async (_request, reply) => {
      reply.header('cache-control', `public, max-age=${JWKS_MAX_AGE_SECONDS}, stale-if-error=86400`);
      return keys.jwks();
    },
  });
}
