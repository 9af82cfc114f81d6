import Type from 'typebox';
import { NullableTimestamp, PageQuery, Timestamp, Uuid } from '../../platform/http/schemas.js';

/** A key as listed: never the key itself, only its first characters. */
export const ApiKey = Type.Object({
  id: Uuid,
  appId: Uuid,
  name: Type.String(),
  prefix: Type.String(),
  createdAt: Timestamp,
  lastUsedAt: NullableTimestamp,
  revokedAt: NullableTimestamp,
});

/** The create response, the only place the full key is ever shown. */
export const CreatedApiKey = Type.Object({ ...ApiKey.properties, key: Type.String() });

export const ApiKeyCreate = Type.Object(
  { name: Type.String({ minLength: 1, maxLength: 100, pattern: '\\S' }) },
  { additionalProperties: false },
);

export const ApiKeyParams = Type.Object({ appId: Uuid, keyId: Uuid }, { additionalProperties: false });

export const ApiKeyListQuery = Type.Object({ ...PageQuery }, { additionalProperties: false });

export const ApiKeyList = Type.Object({
  apiKeys: Type.Array(ApiKey),
  total: Type.Integer(),
  limit: Type.Integer(),
  offset: Type.Integer(),
});
