// The S3 emulator's own API as the tests use it (the package ships no types).
declare module '@20minutes/s3rver' {
  /** The part of Koa's context the tests' additions read and write. */
  export interface S3rverContext {
    method: string;
    path: string;
    query: Record<string, string | string[] | undefined>;
    state: Record<string, unknown>;
    mountPath?: string;
    status: number;
    type: string;
    body: unknown;
  }
  type Middleware = (context: S3rverContext, next: () => Promise<void>) => unknown;

  interface S3rverOptions {
    address?: string;
    port?: number;
    silent?: boolean;
    directory: string;
    configureBuckets?: { name: string }[];
  }

  export interface S3rverObject {
    key: string;
    size: number;
    lastModifiedDate: Date;
  }

  export default class S3rver {
    constructor(options: S3rverOptions);
    middleware: Middleware[];
    store: {
      getResourcePath(bucket: string, key: string | undefined, resource: string): string;
      listObjects(
        bucket: string,
        options: { prefix?: string },
      ): Promise<{ objects: S3rverObject[]; commonPrefixes: string[] }>;
    };
    run(): Promise<{ address: string; port: number }>;
    close(): Promise<void>;
  }
}
