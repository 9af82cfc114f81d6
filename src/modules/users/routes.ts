import type { HttpApp } from '../../platform/http/create-http-app.js';
import { principalOf } from '../../platform/http/principal.js';
import { perMinute } from '../../platform/http/rate-limit.js';
import { pageOf } from '../../platform/http/schemas.js';
import {
  AdminUserUpdate,
  LoginBody,
  MeResponse,
  RegisterBody,
  Session,
  User,
  UserIdParams,
  UserList,
  UserListQuery,
} from './schemas.js';
import type { UserService } from './service.js';

export function registerUserRoutes(
  app: HttpApp,
  users: UserService,
  limits: { authRateLimit: number },
): void {
  // Per client address, whatever the e-mail: guessing one password, trying leaked pairs across
  // accounts and burning CPU on password hashing are all bounded the same way.
  const authLimit = perMinute(limits.authRateLimit);

  app.post('/auth/register', {
    config: { auth: 'public', rateLimit: authLimit },
    schema: { tags: ['auth'], body: RegisterBody, response: { 201: Session } },
    handler: async (request, reply) => reply.status(201).send(await users.register(request.body)),
  });

  app.post('/auth/login', {
    config: { auth: 'public', rateLimit: authLimit },
    schema: { tags: ['auth'], body: LoginBody, response: { 200: Session } },
    handler: (request) => users.login(request.body),
  });

  app.get('/auth/me', {
    config: { auth: 'seller' },
    schema: { tags: ['auth'], response: { 200: MeResponse } },
    handler: (request) => users.me(principalOf(request)),
  });

  app.get('/admin/users', {
    config: { auth: 'admin' },
    schema: { tags: ['admin'], querystring: UserListQuery, response: { 200: UserList } },
    handler: (request) => {
      const { limit, offset, ...filter } = request.query;
      return users.list(filter, pageOf({ limit, offset }));
    },
  });

  app.patch('/admin/users/:id', {
    config: { auth: 'admin' },
    schema: { tags: ['admin'], params: UserIdParams, body: AdminUserUpdate, response: { 200: User } },
    handler: (request) => users.update(principalOf(request), request.params.id, request.body),
  });

  app.delete('/admin/users/:id', {
    config: { auth: 'admin' },
    schema: { tags: ['admin'], params: UserIdParams },
    handler: async (request, reply) => {
      await users.remove(principalOf(request), request.params.id);
      return reply.status(204).send();
    },
  });
}
