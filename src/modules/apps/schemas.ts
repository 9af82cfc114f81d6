import Type from 'typebox';
import { PageQuery, Timestamp, Uuid } from '../../platform/http/schemas.js';

export const App = Type.Object({
  id: Uuid,
  userId: Uuid,
  name: Type.String(),
  description: Type.String(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

const Name = Type.String({ minLength: 1, maxLength: 100, pattern: '\\S' });
const Description = Type.String({ maxLength: 2000 });

export const AppCreate = Type.Object(
  { name: Name, description: Type.Optional(Description) },
  { additionalProperties: false },
);

export const AppUpdate = Type.Object(
  { name: Type.Optional(Name), description: Type.Optional(Description) },
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
