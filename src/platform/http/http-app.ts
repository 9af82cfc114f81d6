import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyBaseLogger, FastifyInstance, RawServerDefault } from 'fastify';

/**
 * The Fastify instance both hosts are (create-http-app.ts builds it), with TypeBox typing: in a
 * file of its own, so what create-http-app.ts registers (CORS, the response contract) can name it
 * without importing the file that imports them.
 */
export type HttpApp = FastifyInstance<
  RawServerDefault,
  IncomingMessage,
  ServerResponse,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;
