import Type from 'typebox';
import { AppError } from '../../platform/errors.js';
import type { HttpApp } from '../../platform/http/create-http-app.js';

interface HealthDeps {
  ping: () => Promise<void>;
}

/** Liveness answers while the process runs; readiness also needs the database. */
export function registerHealthRoutes(app: HttpApp, deps: HealthDeps): void {
  declareLiveness(app, '/health', 'Liveness: the process answers');
  declareReadiness(app, '/health/ready', 'Readiness: the process and its database answer', deps);
}

/**
 * The same two checks at the host's root under the names Kubernetes probes and most load
 * balancers expect (`/healthz`, `/readyz`), so a probe needs no knowledge of `/v1`.
 */
export function registerProbeRoutes(app: HttpApp, deps: HealthDeps): void {
  declareLiveness(app, '/healthz', 'Liveness probe: the process answers (as /health)');
  declareReadiness(
    app,
    '/readyz',
    'Readiness probe: the process and its database answer (as /health/ready)',
    deps,
  );
}

function declareLiveness(app: HttpApp, path: string, summary: string): void {
  app.get(path, {
    config: { auth: 'public', alwaysAnswer: true, probe: true },
    schema: {
      summary,
      tags: ['health'],
      response: { 200: Type.Object({ status: Type.Literal('ok') }, { description: 'The process is up' }) },
    },
    handler: async () => ({ status: 'ok' as const }),
  });
}

function declareReadiness(app: HttpApp, path: string, summary: string, deps: HealthDeps): void {
  app.get(path, {
    config: { auth: 'public', alwaysAnswer: true, probe: true },
    schema: {
      summary,
      description:
        'Answers 503 `not_ready` while the database is unreachable or the node is shutting down (from the start of its drain).',
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
