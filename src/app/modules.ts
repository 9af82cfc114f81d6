import { createAnalyticsService, createVerificationCounter } from '../modules/analytics/index.js';
import { createApiKeyService } from '../modules/api-keys/index.js';
import { createAppService } from '../modules/apps/index.js';
import { createAuthenticator } from '../modules/auth/index.js';
import { createBrandService } from '../modules/brand/index.js';
import { createCheckoutService, createTrials } from '../modules/checkout/index.js';
import {
  createKeyRing,
  createKeySealer,
  createLicenseFileSigner,
  createTokenDenylist,
  createTokenSigner,
} from '../modules/license-tokens/index.js';
import {
  createLicenseService,
  createOfflineActivation,
  createVerification,
  createVerificationCache,
} from '../modules/licenses/index.js';
import { createMailer, createNotificationWorker } from '../modules/mail/index.js';
import {
  createCryptoPartner,
  createPaymentService,
  createSandboxPartner,
} from '../modules/payments/index.js';
import type { StripePartner } from '../modules/payments/stripe-partner.js';
import { createPortalService } from '../modules/portal/index.js';
import { createProductService } from '../modules/products/index.js';
import {
  type ArtifactStore,
  createArtifactService,
  createBlobPurge,
  createDistribution,
  createDownloadLinks,
  createManifestSigner,
  createReleaseService,
  createUpdaterFeeds,
} from '../modules/releases/index.js';
import {
  createRenewals,
  createSubscriptionService,
  openSubscription,
} from '../modules/subscriptions/index.js';
import { createTimelineJournal, createTimelineService } from '../modules/timeline/index.js';
import { createUserService, createUserTokenSigner } from '../modules/users/index.js';
import { createDeliveryWorker, createSender, createWebhookService } from '../modules/webhooks/index.js';
import type { Clock } from '../platform/clock.js';
import type { Config } from '../platform/config.js';
import type { Database } from '../platform/db/database.js';
import { createNamedLocks } from '../platform/db/named-lock.js';
import { openNotifications } from '../platform/db/notifications.js';
import { createIdempotencyKeys } from '../platform/http/idempotency-keys.js';
import type { Log } from '../platform/log.js';
import { METRICS_OFF, type Metrics } from '../platform/metrics.js';

export interface ModuleDeps {
  config: Config;
  database: Database;
  log: Log;
  clock: Clock;
  sessionSecret: string;
  /** The keys private signing keys are sealed under: the first seals, all open. */
  signingKeyEncryptionKeys: readonly Uint8Array[];
  /** Newest first: what idempotency keys are hashed and their kept answers encrypted under. */
  idempotencySecrets: readonly string[];
  /** Recorders for the Prometheus metrics; off when not given (one-shot commands). */
  metrics?: Metrics;
  /**
   * The card partner when Stripe is configured, null for the built-in sandbox. Required, so that
   * no caller falls back to the sandbox by forgetting it; openModules loads the SDK only then.
   */
  stripe: StripePartner | null;
  /** Where artifacts' bytes are kept (a folder, or S3: openModules loads its SDK only then). */
  artifactStore: ArtifactStore;
}

/** Builds every domain service once; both hosts mount routes over these same instances. */
export function createModules({
  config,
  database,
  log,
  clock,
  sessionSecret,
  signingKeyEncryptionKeys,
  idempotencySecrets,
  metrics = METRICS_OFF,
  stripe,
  artifactStore: blobs,
}: ModuleDeps) {
  const { db } = database;
  // Connects on the first listen, so one-shot commands (admin create) open no listener.
  const notifications = openNotifications(database.listenTarget, log);
  const tokens = createUserTokenSigner({
    secret: sessionSecret,
    formerIssuer: config.apiBaseUrl,
    ttlSeconds: config.userTokenTtlSeconds,
    clock,
  });
  // Starts listening on the first verify, so one-shot commands open no listener for it.
  const verificationCache = createVerificationCache({
    db,
    log,
    notifications,
    outageGraceMs: config.verifyOutageGraceSeconds * 1000,
  });
  const users = createUserService({
    db,
    clock,
    log,
    tokens,
    passwordHashCost: config.passwordHashCost,
    sellerChanges: verificationCache,
  });
  const apps = createAppService({ db, clock, log, licenseChanges: verificationCache });
  const apiKeys = createApiKeyService({ db, clock, log, apps });
  const policy = { allowPrivate: config.webhookAllowPrivate, requireHttps: config.env === 'production' };
  const products = createProductService({
    db,
    clock,
    log,
    apps,
    payUrl: config.payPublicUrl,
    webhookTargets: policy,
    licenseChanges: verificationCache,
  });
  const licenses = createLicenseService({ db, clock, log, apps, products, cache: verificationCache });
  const releases = createReleaseService({ db, clock, log, apps });
  const artifactPurge = createBlobPurge({ db, clock, log, blobs });
  const artifacts = createArtifactService({
    db,
    clock,
    log,
    apps,
    releases,
    blobs,
    maxBytes: config.artifactMaxBytes,
  });
  const keyRing = createKeyRing({ db, clock, log, sealer: createKeySealer(signingKeyEncryptionKeys) });
  const signer = config.licenseTokens
    ? createTokenSigner({
        keys: keyRing,
        clock,
        issuer: config.licenseTokenIssuer,
        onIssued: metrics.tokenIssued,
      })
    : null;
  const denylist = createTokenDenylist({ db, clock });
  // License files and revocation lists for offline machines: the offline key, off with tokens.
  const offlineActivation = createOfflineActivation({
    db,
    clock,
    log,
    signer: config.licenseTokens
      ? createLicenseFileSigner({ db, keys: keyRing, clock, issuer: config.licenseTokenIssuer })
      : null,
  });
  const verificationCounts = createVerificationCounter({ db, clock, log });
  // Client calls' timeline entries, held like the counts and written by the same kind of job.
  const timelineJournal = createTimelineJournal({ db, clock, log, enabled: config.licenseTimelineCalls });
  const timeline = createTimelineService({
    db,
    clock,
    log,
    apps,
    cursorSecret: sessionSecret,
    retentionDays: config.licenseEventsRetentionDays,
  });
  const verification = createVerification({
    db,
    clock,
    log,
    signer,
    denylist,
    jwksUri: `${config.apiBaseUrl}/licenses/jwks`,
    counts: verificationCounts,
    cache: verificationCache,
    outcomes: metrics.verifyOutcome,
    timeline: timelineJournal,
  });
  const distribution = createDistribution({
    db,
    clock,
    log,
    verification,
    blobs,
    links: createDownloadLinks({ secret: sessionSecret, apiBaseUrl: config.apiBaseUrl }),
    apps,
    // Signed by the offline keys, off with them.
    manifests: createManifestSigner({
      keys: config.licenseTokens ? keyRing : null,
      issuer: config.licenseTokenIssuer,
    }),
  });
  const feeds = createUpdaterFeeds({
    db,
    log,
    distribution,
    apiBaseUrl: config.apiBaseUrl,
    // A `.sig` is a few hundred bytes of text beside the file it signs, in the same store.
    signatureOf: (sha256) => blobs.readText(sha256),
  });
  const sender = createSender(policy, clock);
  const webhooks = createWebhookService({ db, clock, log, sender, policy, apps });
  const deliveryWorker = createDeliveryWorker({
    db,
    clock,
    log,
    sender,
    observeAttempt: metrics.webhookAttempt,
  });
  // The card partner: Stripe when configured, the built-in sandbox otherwise.
  const partner = stripe ?? createSandboxPartner({ db, clock });
  const webhookSecret = config.stripeWebhookSecret;
  const payments = createPaymentService({
    db,
    clock,
    log,
    partner,
    crypto: config.crypto ? createCryptoPartner(config.crypto) : null,
    products,
    licenses,
    openSubscription,
    verifyPartnerEvent:
      stripe && webhookSecret
        ? (rawBody, signature) =>
            stripe.client.webhooks.constructEvent(rawBody, signature, webhookSecret, 300) as never
        : null,
  });
  // Renewal charges and cancels of one subscription take turns across the partner call.
  const locks = createNamedLocks(database);
  const subscriptions = createSubscriptionService({ db, clock, log, partner, locks });
  const brands = createBrandService({
    db,
    clock,
    log,
    payUrl: config.payPublicUrl,
    overlayOrigins: { allowLoopbackHttp: config.env !== 'production' },
  });
  const checkout = createCheckoutService({
    clock,
    log,
    payments,
    products,
    brands,
    trials: createTrials({ db, clock, log, products, licenses }),
    card:
      stripe && config.stripePublishableKey
        ? { kind: 'stripe', publishableKey: config.stripePublishableKey }
        : { kind: 'sandbox' },
    cryptoConfigured: config.crypto !== null,
    payUrl: config.payPublicUrl,
  });
  const renewals = createRenewals({ db, clock, log, partner, licenses, locks });
  // The buyer portal acts through the same services as the seller's routes.
  const portal = createPortalService({
    db,
    clock,
    log,
    payUrl: config.payPublicUrl,
    linkSecret: sessionSecret,
    licenses,
    offline: offlineActivation,
    subscriptions,
    brands,
    releases: distribution,
  });
  const mailer = createMailer({
    smtpUrl: config.smtpUrl,
    from: config.mailFrom,
    outboxDir: config.mailOutboxDir,
  });
  const notificationWorker = createNotificationWorker({
    db,
    clock,
    log,
    mailer,
    brands,
    observeSend: metrics.mailSend,
    composedAtSend: { 'portal.sign_in': portal.signInMail },
  });
  const authenticate = createAuthenticator({ tokens, users, apiKeys });
  const analytics = createAnalyticsService({ db, clock });
  const idempotency = createIdempotencyKeys({ db, clock, log, secrets: idempotencySecrets });
  return {
    database,
    notifications,
    users,
    apps,
    apiKeys,
    products,
    licenses,
    releases,
    artifacts,
    artifactPurge,
    distribution,
    feeds,
    keyRing,
    verification,
    offlineActivation,
    verificationCache,
    verificationCounts,
    timeline,
    timelineJournal,
    denylist,
    webhooks,
    payments,
    subscriptions,
    renewals,
    portal,
    checkout,
    brands,
    deliveryWorker,
    sender,
    mailer,
    notificationWorker,
    authenticate,
    analytics,
    metrics,
    idempotency,
  };
}

export type Modules = ReturnType<typeof createModules>;
