import type { HttpApp } from '../../platform/http/create-http-app.js';
import { principalOf } from '../../platform/http/principal.js';
import { perMinute } from '../../platform/http/rate-limit.js';
import { noContent } from '../../platform/http/responses.js';
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
    // The account has no route by id: a seller reads their own at /auth/me, with this token.
    config: { auth: 'public', rateLimit: authLimit, location: () => '/auth/me' },
    schema: {
      summary: 'Register a seller account',
      description: 'Creates the account and signs it in: the answer carries a user token.',
      tags: ['auth'],
      body: RegisterBody,
      response: { 201: Session },
      errors: { email_taken: 'an account with this e-mail already exists' },
    },
    handler: async (request, reply) => reply.status(201).send(await users.register(request.body)),
  });

  app.post('/auth/login', {
    config: { auth: 'public', rateLimit: authLimit },
    schema: {
      summary: 'Sign in',
      description: 'Exchanges e-mail and password for a user token.',
      tags: ['auth'],
      body: LoginBody,
      response: { 200: Session },
      errors: { invalid_credentials: 'the e-mail or the password is wrong (the two are not told apart)' },
    },
    handler: (request) => users.login(request.body),
  });

  app.get('/auth/me', {
    config: { auth: 'seller' },
    schema: { summary: 'The signed-in account', tags: ['auth'], response: { 200: MeResponse } },
    handler: (request) => users.me(principalOf(request)),
  });

  app.get('/admin/users', {
    config: { auth: 'admin' },
    schema: {
      summary: 'List accounts',
      tags: ['admin'],
      querystring: UserListQuery,
      response: { 200: UserList },
    },
    handler: (request) => {
      const { limit, offset, ...filter } = request.query;
      return users.list(filter, pageOf({ limit, offset }));
    },
  });

  app.patch('/admin/users/:id', {
    config: { auth: 'admin' },
    schema: {
      summary: 'Change an account’s tier or role',
      tags: ['admin'],
      params: UserIdParams,
      body: AdminUserUpdate,
      response: { 200: User },
      errors: { conflict: 'an admin tried to remove their own ADMIN role' },
    },
    handler: (request) => users.update(principalOf(request), request.params.id, request.body),
  });

  app.delete('/admin/users/:id', {
    config: { auth: 'admin' },
    schema: {
      summary: 'Close an account',
      tags: ['admin'],
      params: UserIdParams,
      response: { 204: noContent('The account is closed; its tokens and keys stop working') },
      errors: { conflict: 'an admin tried to close their own account' },
    },
    handler: async (request, reply) => {
      await users.remove(principalOf(request), request.params.id);
      return reply.status(204).send();
    },
  });
}
