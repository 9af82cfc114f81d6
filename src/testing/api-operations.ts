import type { TestServer } from './harness.js';
import type { JsonSchema } from './schema-arbitrary.js';

/**
 * Every operation of both hosts as their OpenAPI documents describe it, read over HTTP from a
 * running test server: what the generated suites walk, so a new route is covered without edits.
 */
export interface Operation {
  host: 'core' | 'pay';
  method: string;
  /** The path from the host's origin, `/v1/apps/{appId}` (the document's `/apps/{appId}` under its server). */
  path: string;
  /** The same as the router spells it, `/v1/apps/:appId` (what registeredRoutes lists). */
  routeUrl: string;
  auth: 'public' | 'seller' | 'user' | 'admin';
  pathParams: Parameter[];
  query: Parameter[];
  /** Request headers the route declares (an updater feed's Authorization, say). */
  headers: Parameter[];
  body: { mediaType: string; schema: JsonSchema; required: boolean } | null;
  /** Media types each declared status answers with (`[]` for none). */
  responses: Record<string, string[]>;
}

export interface Parameter {
  name: string;
  required: boolean;
  schema: JsonSchema;
}

interface DocumentOperation {
  'x-auth'?: Operation['auth'];
  servers?: { url: string }[];
  parameters?: (Parameter & { in: string })[];
  requestBody?: { required?: boolean; content: Record<string, { schema: JsonSchema }> };
  responses?: Record<string, { content?: Record<string, unknown> }>;
}

export async function fetchOperations(server: TestServer): Promise<Operation[]> {
  const documents = [
    ['core', `${server.service.coreUrl}/v1/openapi.json`],
    ['pay', `${server.service.payUrl}/openapi.json`],
  ] as const;
  const operations: Operation[] = [];
  for (const [host, url] of documents) {
    const document = (await (await fetch(url)).json()) as {
      servers: { url: string }[];
      paths: Record<string, Record<string, DocumentOperation>>;
    };
    for (const [relative, item] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        // Paths are relative to the server (`{base_url}`, ending in /v1); a route at the host's
        // root names the origin as its own server.
        const server = operation.servers?.[0] ?? document.servers[0];
        const path = `${new URL(server?.url ?? url).pathname.replace(/\/$/, '')}${relative}`;
        const parameters = operation.parameters ?? [];
        const [mediaType, content] = Object.entries(operation.requestBody?.content ?? {})[0] ?? [];
        operations.push({
          host,
          method: method.toUpperCase(),
          path,
          routeUrl: path.replace(/\{([^}]+)\}/g, ':$1'),
          auth: operation['x-auth'] ?? 'public',
          pathParams: parameters.filter((p) => p.in === 'path'),
          query: parameters.filter((p) => p.in === 'query'),
          headers: parameters.filter((p) => p.in === 'header'),
          body:
            mediaType && content
              ? { mediaType, schema: content.schema, required: operation.requestBody?.required ?? false }
              : null,
          responses: Object.fromEntries(
            Object.entries(operation.responses ?? {}).map(([status, response]) => [
              status,
              Object.keys(response.content ?? {}),
            ]),
          ),
        });
      }
    }
  }
  return operations;
}

export const operationName = (operation: Pick<Operation, 'host' | 'method' | 'routeUrl'>) =>
  `${operation.host} ${operation.method} ${operation.routeUrl}`;
