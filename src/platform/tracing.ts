import { register } from 'node:module';

/**
 * OpenTelemetry tracing through the official Node SDK, exported over OTLP/HTTP (JSON) to the
 * collector at OTEL_EXPORTER_OTLP_ENDPOINT, and off (nothing loaded) when that is unset.
 *
 * Instrumentations patch modules as they load, so the CLI starts tracing before it imports the
 * app: `serve` parses the config, calls this, and only then imports the service (see cli.ts).
 * Traced: incoming HTTP requests (a span per request, named by method and route pattern, with a
 * child span per Fastify route and hook), outgoing HTTP (webhooks, partners) and PostgreSQL
 * statements. The SDK's own OTEL_* settings (OTEL_SERVICE_NAME, OTEL_TRACES_SAMPLER, …) apply.
 */
export interface Tracing {
  /** Sends the spans still buffered, then stops. */
  shutdown(): Promise<void>;
}

export async function startTracing({
  endpoint,
  serviceName,
}: {
  endpoint: string;
  serviceName: string;
}): Promise<Tracing> {
  // The ESM loader hook lets instrumentations patch modules loaded by `import` as well.
  register('@opentelemetry/instrumentation/hook.mjs', import.meta.url);
  const [{ NodeSDK }, { OTLPTraceExporter }, { HttpInstrumentation }, { PgInstrumentation }, fastifyOtel] =
    await Promise.all([
      import('@opentelemetry/sdk-node'),
      import('@opentelemetry/exporter-trace-otlp-http'),
      import('@opentelemetry/instrumentation-http'),
      import('@opentelemetry/instrumentation-pg'),
      import('@fastify/otel'),
    ]);
  const sdk = new NodeSDK({
    serviceName,
    // The endpoint is the collector's base URL, as the OTLP specification reads the variable.
    traceExporter: new OTLPTraceExporter({ url: `${endpoint.replace(/\/+$/, '')}/v1/traces` }),
    instrumentations: [
      new HttpInstrumentation(),
      new PgInstrumentation(),
      // Registers itself on every Fastify instance created from now on (both hosts).
      new fastifyOtel.FastifyOtelInstrumentation({ registerOnInitialization: true }),
    ],
  });
  sdk.start();
  return { shutdown: () => sdk.shutdown() };
}
