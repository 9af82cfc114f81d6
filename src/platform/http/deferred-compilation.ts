import { setImmediate as nextTurn } from 'node:timers/promises';
import SerializerSelector from '@fastify/fast-json-stringify-compiler';
import type { FastifySchemaCompiler, FastifyServerOptions } from 'fastify';
import type { Log } from '../log.js';

type Validate = ReturnType<FastifySchemaCompiler<unknown>> & ((data: unknown) => unknown);
type Serialize = (data: unknown) => string;
/** What Fastify's `schemaController.compilersFactory.buildSerializer` option takes. */
type SerializerFactory = NonNullable<
  NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>['buildSerializer']
>;

/**
 * Route schemas compiled when first used, or in the background once the app listens, instead of
 * all before it listens. Compiling every route's validators (Ajv) and serializers
 * (fast-json-stringify) was the largest part of a start after loading the code (about a second
 * of CPU on two cores), and a node restarting behind a load balancer is out of the pool all that
 * time. A compiled function is kept and used as before; a route asked for before the background
 * pass reaches it compiles at that moment, as the whole app did at start.
 *
 * Fastify keeps whatever function a compiler returns, so each is a small forwarder to the
 * compiled one: one more call per validation and serialization, measured as nothing beside
 * the work they forward to.
 */
export class DeferredCompilation {
  private readonly pending = new Set<() => unknown>();
  private stopped = false;

  constructor(private readonly log: Log) {}

  /** A validator compiler that defers `compile`'s work to the first validation. */
  validators(compile: FastifySchemaCompiler<unknown>): FastifySchemaCompiler<unknown> {
    return (route) => {
      let compiled: Validate | null = null;
      const ensure = () => {
        compiled ??= compile(route) as Validate;
        return compiled;
      };
      this.pending.add(ensure);
      // Fastify reads the errors of a failed validation from the function it called.
      const validate: Validate = (data) => {
        const inner = ensure();
        const valid = inner(data);
        validate.errors = inner.errors;
        return valid;
      };
      return validate;
    };
  }

  /** Fastify's own serializer factory (fast-json-stringify), its compilations deferred. */
  serializers(): SerializerFactory {
    return (externalSchemas, serializerOptions) => {
      const compile = (SerializerSelector() as unknown as SerializerFactory)(
        externalSchemas,
        serializerOptions,
      );
      return (route) => {
        let compiled: Serialize | null = null;
        const ensure = () => {
          compiled ??= compile(route) as Serialize;
          return compiled;
        };
        this.pending.add(ensure);
        return (data: unknown) => ensure()(data);
      };
    };
  }

  /**
   * Compiles what no request has asked for yet, one schema a turn of the event loop, so requests
   * arriving meanwhile wait for one compilation at most. A schema that fails to compile is a bug
   * of ours: it is logged here, and its route answers the error when asked.
   */
  async warmUp(): Promise<void> {
    for (const ensure of this.pending) {
      if (this.stopped) return;
      this.pending.delete(ensure);
      try {
        ensure();
      } catch (error) {
        this.log.error({ err: error }, 'http.schema.compile_failed');
      }
      await nextTurn();
    }
  }

  stop(): void {
    this.stopped = true;
  }
}
