import Type, { type Static } from 'typebox';
import { ROLES, TIERS } from '../../platform/http/principal.js';
import { Email, PageQuery, Timestamp, Uuid } from '../../platform/http/schemas.js';

export const Role = Type.Enum(ROLES);
export const Tier = Type.Enum(TIERS);

/** The user resource: an allow-list, so a new column (a hash, a secret) cannot leak. */
export const User = Type.Object({
  id: Uuid,
  email: Type.String(),
  name: Type.Union([Type.String(), Type.Null()]),
  role: Role,
  tier: Tier,
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type UserResource = Static<typeof User>;

export const Password = Type.String({ minLength: 8, maxLength: 256 });

export const RegisterBody = Type.Object(
  { email: Email, password: Password, name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })) },
  { additionalProperties: false },
);

export const LoginBody = Type.Object(
  {
    email: Type.String({ minLength: 1, maxLength: 254 }),
    password: Type.String({ minLength: 1, maxLength: 256 }),
  },
  { additionalProperties: false },
);

export const Session = Type.Object({ token: Type.String(), expiresAt: Timestamp, user: User });

export const MeResponse = Type.Object({
  user: User,
  credential: Type.Object({
    kind: Type.Enum(['user_token', 'api_key']),
    appId: Type.Optional(Uuid),
    apiKeyId: Type.Optional(Uuid),
  }),
});

export const UserIdParams = Type.Object({ id: Uuid }, { additionalProperties: false });

export const AdminUserUpdate = Type.Object(
  { tier: Type.Optional(Tier), role: Type.Optional(Role) },
  { additionalProperties: false, minProperties: 1 },
);

export const UserListQuery = Type.Object(
  {
    ...PageQuery,
    email: Type.Optional(Type.String({ minLength: 1, maxLength: 254 })),
    role: Type.Optional(Role),
    tier: Type.Optional(Tier),
  },
  { additionalProperties: false },
);

export const UserList = Type.Object({
  users: Type.Array(User),
  total: Type.Integer(),
  limit: Type.Integer(),
  offset: Type.Integer(),
});
