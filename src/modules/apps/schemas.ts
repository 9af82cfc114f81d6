import Type from 'typebox';
import type { ClientAddressPolicy, SigningAlgorithm } from '../../platform/db/schema.js';
import { PageQuery, Timestamp, Uuid } from '../../platform/http/schemas.js';

export const TOKEN_ALGORITHMS = ['RS256', 'EdDSA'] as const satisfies readonly SigningAlgorithm[];

/** How the app's tokens, license files and revocation lists are signed. */
const TokenAlgorithm = Type.Enum(TOKEN_ALGORITHMS, {
  description:
    'How the license tokens (verify answers’ license_token), license files and revocation lists of this app are signed: RS256 (RSA, the default) or EdDSA (Ed25519: shorter signatures, faster to sign and to check). A change applies to what is signed after it; what was signed before stays valid until it expires. Both kinds of key are in GET /licenses/jwks.',
  errorMessage: 'must be RS256 or EdDSA',
});

export const CLIENT_ADDRESS_POLICIES = [
  'full',
  'truncated',
  'none',
] as const satisfies readonly ClientAddressPolicy[];

/** What the app's license timelines keep of the address each client call came from. */
const ClientAddresses = Type.Enum(CLIENT_ADDRESS_POLICIES, {
  description:
    'What the timelines of this app’s licenses keep of the address a client called from: `full`, `truncated` (the default: the network only, IPv4 /24 and IPv6 /48) or `none`. Applied when an entry is written; entries already written keep what they kept.',
  errorMessage: 'must be full, truncated or none',
});

export const App = Type.Object({
  id: Uuid,
  userId: Uuid,
  name: Type.String(),
  description: Type.String(),
  tokenAlgorithm: TokenAlgorithm,
  clientAddresses: ClientAddresses,
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

const Name = Type.String({ minLength: 1, maxLength: 100, pattern: '\\S' });
const Description = Type.String({ maxLength: 2000 });

export const AppCreate = Type.Object(
  {
    name: Name,
    description: Type.Optional(Description),
    tokenAlgorithm: Type.Optional(TokenAlgorithm),
    clientAddresses: Type.Optional(ClientAddresses),
  },
  { additionalProperties: false },
);

export const AppUpdate = Type.Object(
  {
    name: Type.Optional(Name),
    description: Type.Optional(Description),
    tokenAlgorithm: Type.Optional(TokenAlgorithm),
    clientAddresses: Type.Optional(ClientAddresses),
  },
  { additionalProperties: false, minProperties: 1 },
);

export const AppParams = Type.Object({ appId: Uuid }, { additionalProperties: false });

export const AppListQuery = Type.Object({ ...PageQuery }, { additionalProperties: false });

export const AppList = Type.Object({
  apps: Type.Array(App),
  total: Type.Integer(),
  limit: Type.Integer(),
  offset: Type.Integer(),
});
