import { requestJson } from './http.js';
import type {
  ApiKey,
  App,
  Introspection,
  License,
  LicenseInput,
  Page,
  Product,
  ProductInput,
  Session,
  User,
  VerificationResult,
} from './types.js';

export interface LicensingClientOptions {
  /** The service address without the version segment, e.g. https://api.example.com (a trailing /v1 is accepted). */
  baseUrl: string;
  /** A seller session token or an app API key; not needed for verify and introspect. */
  token?: string;
  fetch?: typeof fetch;
}

type Query = Record<string, string | number | boolean | undefined>;
type PageQuery = { limit?: number; offset?: number };

/** A typed client for the core API. Every path is sent under /v1. */
export class LicensingClient {
  private readonly base: string;
  private readonly fetchImpl: typeof fetch;

  constructor(private readonly options: LicensingClientOptions) {
    this.base = `${options.baseUrl.replace(/\/+$/, '').replace(/\/v1$/, '')}/v1`;
    this.fetchImpl = options.fetch ?? fetch;
  }

  /** The same client acting with another credential. */
  withToken(token: string): LicensingClient {
    return new LicensingClient({ ...this.options, token });
  }

  async request<T>(method: string, path: string, body?: unknown, query?: Query): Promise<T> {
    const url = new URL(this.base + path);
    for (const [name, value] of Object.entries(query ?? {})) {
      if (value !== undefined) url.searchParams.set(name, String(value));
    }
    const headers: Record<string, string> = {};
    if (this.options.token) headers.authorization = `Bearer ${this.options.token}`;
    return requestJson<T>(this.fetchImpl, method, url, body, headers);
  }

  // Client software: public routes. The app id is required here: without it, a key issued for
  // any other app on the service would verify too.
  verify = (input: { key: string; hwuid?: string; appId: string }) =>
    this.request<VerificationResult>('POST', '/licenses/verify', input);
  validateHardware = (input: { key: string; hwuid: string; appId: string }) =>
    this.request<VerificationResult>('POST', '/licenses/validate-hardware', input);
  introspect = (licenseToken: string) =>
    this.request<Introspection>('POST', '/licenses/introspect', { license_token: licenseToken });
  /** The key set address for offline checks. */
  get jwksUri(): string {
    return `${this.base}/licenses/jwks`;
  }

  // Sellers' backends.
  revokeToken = (jti: string) =>
    this.request<{ jti: string; revoked: true; expiresAt: string }>('POST', '/licenses/revoke-token', {
      jti,
    });

  readonly auth = {
    register: (input: { email: string; password: string; name?: string }) =>
      this.request<Session>('POST', '/auth/register', input),
    login: (input: { email: string; password: string }) =>
      this.request<Session>('POST', '/auth/login', input),
    me: () =>
      this.request<{ user: User; credential: { kind: string; appId?: string; apiKeyId?: string } }>(
        'GET',
        '/auth/me',
      ),
  };

  readonly apps = {
    list: (query: PageQuery = {}) => this.request<Page<'apps', App>>('GET', '/apps', undefined, query),
    create: (input: { name: string; description?: string }) => this.request<App>('POST', '/apps', input),
    get: (appId: string) => this.request<App>('GET', `/apps/${appId}`),
    update: (appId: string, input: { name?: string; description?: string }) =>
      this.request<App>('PATCH', `/apps/${appId}`, input),
    delete: (appId: string) => this.request<void>('DELETE', `/apps/${appId}`),
  };

  readonly apiKeys = {
    list: (appId: string, query: PageQuery = {}) =>
      this.request<Page<'apiKeys', ApiKey>>('GET', `/apps/${appId}/api-keys`, undefined, query),
    create: (appId: string, input: { name: string }) =>
      this.request<ApiKey & { key: string }>('POST', `/apps/${appId}/api-keys`, input),
    revoke: (appId: string, keyId: string) =>
      this.request<void>('DELETE', `/apps/${appId}/api-keys/${keyId}`),
  };

  readonly products = {
    list: (
      query: PageQuery & {
        active?: boolean;
        productType?: string;
        billingType?: string;
        currency?: string;
        appId?: string;
        q?: string;
      } = {},
    ) => this.request<Page<'products', Product>>('GET', '/products', undefined, query),
    create: (input: ProductInput & { name: string; price: number; currency: string }) =>
      this.request<Product>('POST', '/products', input),
    get: (id: string) => this.request<Product>('GET', `/products/${id}`),
    replace: (id: string, input: ProductInput & { name: string; price: number; currency: string }) =>
      this.request<Product>('PUT', `/products/${id}`, input),
    update: (id: string, input: ProductInput) => this.request<Product>('PATCH', `/products/${id}`, input),
    rotateCallbackSecret: (id: string) =>
      this.request<Product>('POST', `/products/${id}/rotate-callback-secret`),
    delete: (id: string) => this.request<void>('DELETE', `/products/${id}`),
  };

  readonly licenses = {
    list: (
      appId: string,
      query: PageQuery & {
        status?: License['status'];
        productId?: string;
        email?: string;
        /** The exact license key (any case, with or without dashes). */
        key?: string;
      } = {},
    ) => this.request<Page<'licenses', License>>('GET', `/apps/${appId}/licenses`, undefined, query),
    issue: (appId: string, input: LicenseInput = {}) =>
      this.request<License>('POST', `/apps/${appId}/licenses`, input),
    get: (appId: string, licenseId: string) =>
      this.request<License>('GET', `/apps/${appId}/licenses/${licenseId}`),
    update: (appId: string, licenseId: string, input: LicenseInput) =>
      this.request<License>('PATCH', `/apps/${appId}/licenses/${licenseId}`, input),
    suspend: (appId: string, licenseId: string) =>
      this.request<License>('POST', `/apps/${appId}/licenses/${licenseId}/suspend`),
    revoke: (appId: string, licenseId: string) =>
      this.request<License>('POST', `/apps/${appId}/licenses/${licenseId}/revoke`),
    reinstate: (appId: string, licenseId: string) =>
      this.request<License>('POST', `/apps/${appId}/licenses/${licenseId}/reinstate`),
    devices: (appId: string, licenseId: string) =>
      this.request<{ devices: { hwuid: string; activatedAt: string }[]; total: number }>(
        'GET',
        `/apps/${appId}/licenses/${licenseId}/devices`,
      ),
    releaseDevice: (appId: string, licenseId: string, hwuid: string) =>
      this.request<void>(
        'DELETE',
        `/apps/${appId}/licenses/${licenseId}/devices/${encodeURIComponent(hwuid)}`,
      ),
  };
}
