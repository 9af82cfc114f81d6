import { checkedKey, type RawBody, type RetryClass, type RetryOptions, requestJson } from './http.js';
import type {
  Artifact,
  ArtifactAddress,
  AvailableUpdate,
  ExternalArtifactInput,
  Release,
  ReleaseChannel,
  ReleaseDownloads,
  ReleaseInput,
  ReleaseUpdateInput,
  UpdateCheckInput,
} from './release-types.js';
import type {
  ApiKey,
  App,
  AppInput,
  Device,
  DeviceLabel,
  Introspection,
  License,
  LicenseInput,
  LicenseSort,
  LicenseUpdateInput,
  LicenseUsage,
  OfflineActivation,
  OfflineActivationInput,
  Page,
  Product,
  ProductInput,
  RevocationList,
  SeatCheckin,
  SeatList,
  Session,
  TimelinePage,
  TimelineType,
  UsageResult,
  User,
  VerificationResult,
} from './types.js';

export interface LicensingClientOptions extends RetryOptions {
  /** The service address without the version segment, e.g. https://api.example.com (a trailing /v1 is accepted). */
  baseUrl: string;
  /** A seller session token or an app API key; not needed for verify and introspect. */
  token?: string;
  /**
   * Your software's version (`2.4.1`: 1 to 64 visible ASCII characters), sent as X-App-Version
   * with every call, so the seller sees which version each verification came from in the
   * license's timeline.
   */
  appVersion?: string;
  fetch?: typeof fetch;
}

const APP_VERSION = /^[\x21-\x7e]{1,64}$/;

/** Options of a creating call (issue, create, register). */
export interface CreateOptions {
  /**
   * Your own Idempotency-Key (1 to 255 characters), e.g. your order id: the same key with the same
   * body within 24 hours creates nothing new and answers the first result. By default the SDK makes
   * one per call and sends it on each retry of that call.
   */
  idempotencyKey?: string;
}

/** Options of request(); `idempotencyKey` makes a POST safe to retry. */
export interface RequestOptions extends CreateOptions {
  query?: Query;
}

type Query = Record<string, string | number | boolean | undefined>;

/** What send() takes beside the path: a raw body (an upload) and its own time limit too. */
interface SendOptions extends RequestOptions {
  raw?: { body: RawBody; contentType: string };
  timeoutMs?: number;
}

/** How long one attempt of an artifact upload may take unless the call says: large files are slow. */
const UPLOAD_TIMEOUT_MS = 60 * 60 * 1000;

/** The filters and sort of a license list; `sort` is a column, `-` first for descending. */
type LicenseQuery = PageQuery & {
  status?: License['status'];
  productId?: string;
  /** Any part of the buyer's address, ignoring case. */
  email?: string;
  /** The exact license key (any case, with or without dashes). */
  key?: string;
  sort?: LicenseSort | `-${LicenseSort}`;
};
type PageQuery = { limit?: number; offset?: number };

/** A typed client for the core API. Every path is sent under /v1. */
export class LicensingClient {
  private readonly base: string;
  private readonly fetchImpl: typeof fetch;

  constructor(private readonly options: LicensingClientOptions) {
    if (typeof options?.baseUrl !== 'string' || !/^https?:\/\//.test(options.baseUrl)) {
      throw new TypeError('baseUrl: must be the service address, e.g. https://api.example.com');
    }
    if (options.appVersion !== undefined && !APP_VERSION.test(options.appVersion)) {
      throw new TypeError('appVersion: must be 1 to 64 visible ASCII characters, e.g. 2.4.1');
    }
    this.base = `${options.baseUrl.replace(/\/+$/, '').replace(/\/v1$/, '')}/v1`;
    // Bound so a global fetch called as a method does not lose its receiver (browsers require it).
    this.fetchImpl = options.fetch ?? ((input, init) => fetch(input, init));
  }

  /** The same client acting with another credential. */
  withToken(token: string): LicensingClient {
    return new LicensingClient({ ...this.options, token });
  }

  /**
   * Any route under /v1. GET and PUT are retried like reads; a POST is retried only when you pass
   * an `idempotencyKey` (the service then does it once); others only on 429 and 503.
   */
  request<T>(method: string, path: string, body?: unknown, options: RequestOptions = {}): Promise<T> {
    const upper = method.toUpperCase();
    const retry: RetryClass =
      upper === 'GET' || upper === 'HEAD' || upper === 'PUT'
        ? 'repeatable'
        : upper === 'POST' && options.idempotencyKey !== undefined
          ? 'keyed'
          : 'once';
    return this.send<T>(upper, path, retry, body, options);
  }

  private async send<T>(
    method: string,
    path: string,
    retry: RetryClass,
    body?: unknown,
    options: SendOptions = {},
  ): Promise<T> {
    const url = new URL(this.base + path);
    for (const [name, value] of Object.entries(options.query ?? {})) {
      if (value !== undefined) url.searchParams.set(name, String(value));
    }
    const headers: Record<string, string> = {};
    if (this.options.token) headers.authorization = `Bearer ${this.options.token}`;
    if (this.options.appVersion !== undefined) headers['x-app-version'] = this.options.appVersion;
    return requestJson<T>(
      this.fetchImpl,
      {
        method,
        url,
        body,
        headers,
        retry,
        idempotencyKey: checkedKey(options.idempotencyKey),
        ...(options.raw ? { raw: options.raw } : {}),
        ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
      },
      this.options,
    );
  }

  private get = <T>(path: string, query?: Query) =>
    this.send<T>('GET', path, 'repeatable', undefined, { query });
  private create = <T>(path: string, body: unknown, options: CreateOptions = {}) =>
    this.send<T>('POST', path, 'keyed', body, options);
  private repeatable = <T>(method: string, path: string, body?: unknown) =>
    this.send<T>(method, path, 'repeatable', body);
  private once = <T>(method: string, path: string, body?: unknown) =>
    this.send<T>(method, path, 'once', body);

  // Client software: public routes. The app id is required here: without it, a key issued for
  // any other app on the service would verify too.
  // checkIn (default true): the call is the client's online check-in; false asks without one.
  // `name` and `platform` (DeviceLabel) go with the hwuid, for the seller's and buyer's lists.
  verify = (input: { key: string; hwuid?: string; appId: string; checkIn?: boolean } & DeviceLabel) =>
    this.checkingIn('/licenses/verify', input);
  validateHardware = (
    input: { key: string; hwuid: string; appId: string; checkIn?: boolean } & DeviceLabel,
  ) => this.checkingIn('/licenses/validate-hardware', input);
  /** Takes a seat on a floating license, or renews the one this device holds (the heartbeat). */
  checkout = (input: { key: string; hwuid: string; appId: string; checkIn?: boolean } & DeviceLabel) =>
    this.checkingIn('/licenses/checkout', input);
  /**
   * A client's online call. A license past its check-in deadline answers check_in_overdue once
   * and records the check-in: the call is made again, and answers as the license now stands.
   */
  private checkingIn = async (path: string, input: { checkIn?: boolean }) => {
    const answer = await this.repeatable<VerificationResult>('POST', path, input);
    if (answer.code !== 'check_in_overdue' || input.checkIn === false) return answer;
    return this.repeatable<VerificationResult>('POST', path, input);
  };
  /**
   * Consumes `amount` uses of the license's quota, all or none. Sent with an idempotency key
   * (yours, or one made per call), so a retried consume counts once.
   */
  consumeUsage = (
    input: { key: string; hwuid?: string; appId: string; amount: number },
    options?: CreateOptions,
  ) => this.create<UsageResult>('/licenses/usage', input, options);
  /** Gives the seat back; a retried checkin answers released false (seat_not_held). */
  checkin = (input: { key: string; hwuid: string; appId: string }) =>
    this.repeatable<SeatCheckin>('POST', '/licenses/checkin', input);
  introspect = (licenseToken: string) =>
    this.repeatable<Introspection>('POST', '/licenses/introspect', { license_token: licenseToken });
  /** The app's signed revocation list, for checkRevocations; fetch it whenever the machine is online. */
  revocations = (appId: string) => this.get<RevocationList>('/licenses/revocations', { appId });
  /**
   * The update check: the newest release this license may have past `currentVersion`, with its
   * files for the platform and architecture (links good for an hour, signed manifests for
   * `verifyArtifact`); null when the client is up to date. The license is checked as verify
   * checks it (the device bound while there is room), or with `token` as introspection checks
   * the token; a refusal throws its code.
   */
  checkForUpdate = async (input: UpdateCheckInput): Promise<AvailableUpdate | null> =>
    (await this.repeatable<AvailableUpdate | undefined>('POST', '/releases/upgrade', input)) ?? null;
  /** The key set address for offline checks. */
  get jwksUri(): string {
    return `${this.base}/licenses/jwks`;
  }

  // Sellers' backends.
  revokeToken = (jti: string) =>
    this.repeatable<{ jti: string; revoked: true; expiresAt: string }>('POST', '/licenses/revoke-token', {
      jti,
    });

  readonly auth = {
    register: (input: { email: string; password: string; name?: string }, options?: CreateOptions) =>
      this.create<Session>('/auth/register', input, options),
    login: (input: { email: string; password: string }) =>
      this.repeatable<Session>('POST', '/auth/login', input),
    me: () =>
      this.get<{ user: User; credential: { kind: string; appId?: string; apiKeyId?: string } }>('/auth/me'),
  };

  readonly apps = {
    list: (query: PageQuery = {}) => this.get<Page<'apps', App>>('/apps', query),
    create: (input: AppInput, options?: CreateOptions) => this.create<App>('/apps', input, options),
    get: (appId: string) => this.get<App>(`/apps/${seg(appId)}`),
    update: (appId: string, input: Partial<AppInput>) =>
      this.repeatable<App>('PATCH', `/apps/${seg(appId)}`, input),
    delete: (appId: string) => this.once<void>('DELETE', `/apps/${seg(appId)}`),
  };

  readonly apiKeys = {
    list: (appId: string, query: PageQuery = {}) =>
      this.get<Page<'apiKeys', ApiKey>>(`/apps/${seg(appId)}/api-keys`, query),
    create: (appId: string, input: { name: string }, options?: CreateOptions) =>
      this.create<ApiKey & { key: string }>(`/apps/${seg(appId)}/api-keys`, input, options),
    revoke: (appId: string, keyId: string) =>
      this.once<void>('DELETE', `/apps/${seg(appId)}/api-keys/${seg(keyId)}`),
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
    ) => this.get<Page<'products', Product>>('/products', query),
    create: (
      input: ProductInput & { name: string; price: number; currency: string },
      options?: CreateOptions,
    ) => this.create<Product>('/products', input, options),
    get: (id: string) => this.get<Product>(`/products/${seg(id)}`),
    replace: (id: string, input: ProductInput & { name: string; price: number; currency: string }) =>
      this.repeatable<Product>('PUT', `/products/${seg(id)}`, input),
    update: (id: string, input: ProductInput) =>
      this.repeatable<Product>('PATCH', `/products/${seg(id)}`, input),
    rotateCallbackSecret: (id: string) =>
      this.once<Product>('POST', `/products/${seg(id)}/rotate-callback-secret`),
    delete: (id: string) => this.once<void>('DELETE', `/products/${seg(id)}`),
    /** Gives the product's existing licenses its current license policy; answers the counts. */
    applyLicensePolicy: (id: string) =>
      this.once<{ updated: number; skipped: number }>('POST', `/products/${seg(id)}/license-policy/apply`),
  };

  readonly licenses = {
    list: (appId: string, query: LicenseQuery = {}) =>
      this.get<Page<'licenses', License>>(`/apps/${seg(appId)}/licenses`, query),
    /** Your licenses across all your apps (an API key: its own app's), newest first by default. */
    search: (query: LicenseQuery & { appId?: string } = {}) =>
      this.get<Page<'licenses', License>>('/licenses', query),
    /**
     * The license's timeline, newest first: verifications, activations, seats, usage, status
     * changes with who made them, e-mails and webhook events. Pass `nextCursor` back as `cursor`.
     */
    events: (
      appId: string,
      licenseId: string,
      query: {
        type?: TimelineType | TimelineType[];
        outcome?: 'failure';
        limit?: number;
        cursor?: string;
      } = {},
    ) =>
      this.get<TimelinePage>(`/apps/${seg(appId)}/licenses/${seg(licenseId)}/events`, {
        ...query,
        type: Array.isArray(query.type) ? query.type.join(',') : query.type,
      }),
    issue: (appId: string, input: LicenseInput = {}, options?: CreateOptions) =>
      this.create<License>(`/apps/${seg(appId)}/licenses`, input, options),
    get: (appId: string, licenseId: string) =>
      this.get<License>(`/apps/${seg(appId)}/licenses/${seg(licenseId)}`),
    update: (appId: string, licenseId: string, input: LicenseUpdateInput) =>
      this.repeatable<License>('PATCH', `/apps/${seg(appId)}/licenses/${seg(licenseId)}`, input),
    // Status moves answer 409 when repeated after they took effect, so they are not retried blindly.
    suspend: (appId: string, licenseId: string) =>
      this.once<License>('POST', `/apps/${seg(appId)}/licenses/${seg(licenseId)}/suspend`),
    revoke: (appId: string, licenseId: string) =>
      this.once<License>('POST', `/apps/${seg(appId)}/licenses/${seg(licenseId)}/revoke`),
    reinstate: (appId: string, licenseId: string) =>
      this.once<License>('POST', `/apps/${seg(appId)}/licenses/${seg(licenseId)}/reinstate`),
    devices: (appId: string, licenseId: string) =>
      this.get<{ devices: Device[]; total: number }>(
        `/apps/${seg(appId)}/licenses/${seg(licenseId)}/devices`,
      ),
    seats: (appId: string, licenseId: string) =>
      this.get<SeatList>(`/apps/${seg(appId)}/licenses/${seg(licenseId)}/seats`),
    releaseDevice: (appId: string, licenseId: string, hwuid: string) =>
      this.once<void>('DELETE', `/apps/${seg(appId)}/licenses/${seg(licenseId)}/devices/${seg(hwuid)}`),
    /** Takes a floating license's seat back at once (`license.seat.released`, reason seller). */
    releaseSeat: (appId: string, licenseId: string, hwuid: string) =>
      this.once<void>('DELETE', `/apps/${seg(appId)}/licenses/${seg(licenseId)}/seats/${seg(hwuid)}`),
    /** The license's quota and the count of its current period. */
    usage: (appId: string, licenseId: string) =>
      this.get<LicenseUsage>(`/apps/${seg(appId)}/licenses/${seg(licenseId)}/usage`),
    /** Sets the count of the current period (a correction); `resetUsage` sets it to 0. */
    setUsage: (appId: string, licenseId: string, uses: number) =>
      this.repeatable<LicenseUsage>('PUT', `/apps/${seg(appId)}/licenses/${seg(licenseId)}/usage`, { uses }),
    resetUsage: (appId: string, licenseId: string) =>
      this.repeatable<LicenseUsage>('POST', `/apps/${seg(appId)}/licenses/${seg(licenseId)}/usage/reset`),
    /** A new key for the license; the old one stops at once. Sent with an idempotency key. */
    regenerateKey: (appId: string, licenseId: string, options?: CreateOptions) =>
      this.create<License>(`/apps/${seg(appId)}/licenses/${seg(licenseId)}/regenerate-key`, {}, options),
    /**
     * Binds the device an air-gapped machine's request names and answers its license file.
     * Handing the same request in again binds nothing more, so a lost answer is retried.
     */
    activateOffline: (input: OfflineActivationInput) =>
      this.repeatable<OfflineActivation>('POST', '/licenses/offline-activations', input),
  };

  /** An app's releases: drafts, publishing and yanking (a session, or an API key of the app). */
  readonly releases = {
    list: (
      appId: string,
      query: { channel?: ReleaseChannel; status?: Release['status']; limit?: number; offset?: number } = {},
    ) => this.get<Page<'releases', Release>>(`/apps/${seg(appId)}/releases`, query),
    create: (appId: string, input: ReleaseInput, options?: CreateOptions) =>
      this.create<Release>(`/apps/${seg(appId)}/releases`, input, options),
    get: (appId: string, releaseId: string) =>
      this.get<Release>(`/apps/${seg(appId)}/releases/${seg(releaseId)}`),
    update: (appId: string, releaseId: string, input: ReleaseUpdateInput) =>
      this.repeatable<Release>('PATCH', `/apps/${seg(appId)}/releases/${seg(releaseId)}`, input),
    // Asked again, publish and yank answer the release unchanged, so a retry is safe.
    publish: (appId: string, releaseId: string) =>
      this.repeatable<Release>('POST', `/apps/${seg(appId)}/releases/${seg(releaseId)}/publish`),
    yank: (appId: string, releaseId: string) =>
      this.repeatable<Release>('POST', `/apps/${seg(appId)}/releases/${seg(releaseId)}/yank`),
    /** Deletes a draft; a published release is yanked instead. */
    remove: (appId: string, releaseId: string) =>
      this.once<void>('DELETE', `/apps/${seg(appId)}/releases/${seg(releaseId)}`),
    /** Downloads per UTC day over a period (the last 30 days by default), in all and per file. */
    downloads: (appId: string, releaseId: string, query: { from?: string; to?: string } = {}) =>
      this.get<ReleaseDownloads>(`/apps/${seg(appId)}/releases/${seg(releaseId)}/downloads`, query),
    /**
     * Uploads a file of the release: the body is sent as it is (application/octet-stream) and the
     * service computes its size and digests. A Blob, an ArrayBuffer or a Buffer is retried like a
     * PUT (the same bytes again answer the artifact as it is); a stream (a web ReadableStream, a
     * Node.js Readable such as fs.createReadStream) is read once and never retried. One attempt
     * may take `timeoutMs` (an hour by default). `responseInfo(answer).status` is 201 for a new
     * file, 200 when it replaced a draft's file or repeated the same bytes.
     */
    uploadArtifact: (
      appId: string,
      releaseId: string,
      artifact: ArtifactAddress,
      body: RawBody,
      options: { timeoutMs?: number } = {},
    ) =>
      this.send<Artifact>('PUT', artifactPath(appId, releaseId, artifact), 'repeatable', undefined, {
        query: placeOf(artifact),
        raw: { body, contentType: 'application/octet-stream' },
        timeoutMs: options.timeoutMs ?? UPLOAD_TIMEOUT_MS,
      }),
    /**
     * Adds a file the seller hosts at an https address (`url`): the service never fetches it and
     * download links send licensed clients there. Its `size`, `sha256` and `sha512` are the
     * seller's word; a signed manifest needs all three. Sent with an idempotency key.
     */
    addExternalArtifact: (
      appId: string,
      releaseId: string,
      input: ExternalArtifactInput,
      options?: CreateOptions,
    ) => this.create<Artifact>(`/apps/${seg(appId)}/releases/${seg(releaseId)}/artifacts`, input, options),
    /** The release's files, by file name. */
    listArtifacts: (appId: string, releaseId: string) =>
      this.get<{ artifacts: Artifact[]; total: number }>(
        `/apps/${seg(appId)}/releases/${seg(releaseId)}/artifacts`,
      ),
    getArtifact: (appId: string, releaseId: string, artifact: ArtifactAddress) =>
      this.get<Artifact>(artifactPath(appId, releaseId, artifact), placeOf(artifact)),
    /** Removes a draft's file; a published release keeps its files (409 release_not_draft). */
    removeArtifact: (appId: string, releaseId: string, artifact: ArtifactAddress) =>
      this.send<void>('DELETE', artifactPath(appId, releaseId, artifact), 'once', undefined, {
        query: placeOf(artifact),
      }),
  };
}

const artifactPath = (appId: string, releaseId: string, artifact: ArtifactAddress) =>
  `/apps/${seg(appId)}/releases/${seg(releaseId)}/artifacts/${seg(artifact.filename)}`;
/** An artifact's platform and architecture as the query names them; absent: every one. */
const placeOf = (artifact: ArtifactAddress): Query => ({ platform: artifact.platform, arch: artifact.arch });

/** One path segment: an id with a slash or a dot-dot cannot reach another route. */
function seg(value: string): string {
  return encodeURIComponent(value);
}
