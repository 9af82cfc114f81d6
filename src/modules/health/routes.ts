import Type from 'typebox';
import { AppError } from '../../platform/errors.js';
import type { HttpApp } from '../../platform/http/create-http-app.js';

/** Liveness answers while the process runs; readiness also needs the database. */
export function registerHealthRoutes(app: HttpApp, deps: { ping: () => Promise<void> }): void {
  app.get('/health', {
    config: { auth: 'public', alwaysAnswer: true },
    schema: {
      summary: 'Liveness: the process answers',
      tags: ['health'],
      response: { 200: Type.Object({ status: Type.Literal('ok') }, { description: 'The process is up' }) },
    },
    handler: async () => ({ status: 'ok' as const }),
  });

  app.get('/health/ready', {
    config: { auth: 'public', alwaysAnswer: true },
    schema: {
      summary: 'Readiness: the process and its database answer',
      description: 'Answers 503 `not_ready` while the database is unreachable or the node is shutting down.',
      tags: ['health'],
      response: {
        200: Type.Object(
          { status: Type.Literal('ready'), database: Type.Literal('ok') },
          { description: 'Ready to take requests' },
        ),
      },
    },
    handler: async (request) => {
      try {
        await deps.ping();
      } catch (err) {
        request.log.warn({ err }, 'health.database.unreachable');
        throw new AppError('not_ready', 'The database is not reachable');
      }
      return { status: 'ready' as const, database: 'ok' as const };
    },
  });
}
