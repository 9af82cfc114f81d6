import Type from 'typebox';
import { Email, Nullable, Timestamp, Uuid } from '../../platform/http/schemas.js';
import { Hwuid } from '../licenses/index.js';
import { PAYLOAD_MAX_LENGTH } from './mirror-payload.js';

const Payload = Type.String({ maxLength: PAYLOAD_MAX_LENGTH });

export const PageParams = Type.Object(
  { productId: Type.String({ maxLength: 64 }) },
  { additionalProperties: false },
);
export const PageQuery = Type.Object(
  {
    payload: Type.Optional(Payload),
    /** The device the buyer's software runs on, added by the software that opened the page. */
    hwuid: Type.Optional(Hwuid),
  },
  { additionalProperties: false },
);

/** The hosted form's fields (application/x-www-form-urlencoded). */
export const CheckoutFormBody = Type.Object(
  {
    email: Type.Optional(Type.String({ maxLength: 320 })),
    card: Type.Optional(Type.String({ maxLength: 32 })),
    payload: Type.Optional(Payload),
    attempt: Type.Optional(Type.String({ maxLength: 64 })),
    method: Type.Optional(Type.Union([Type.Literal('card'), Type.Literal('crypto')])),
  },
  { additionalProperties: false },
);

export const CompleteQuery = Type.Object(
  {
    order: Type.String({ maxLength: 64 }),
    key: Type.String({ maxLength: 512 }),
    // Stripe appends these to the return address; the order and key above are what count.
    payment_intent: Type.Optional(Type.String({ maxLength: 255 })),
    payment_intent_client_secret: Type.Optional(Type.String({ maxLength: 512 })),
    redirect_status: Type.Optional(Type.String({ maxLength: 64 })),
  },
  { additionalProperties: false },
);

export const CardPaymentBody = Type.Object(
  {
    productId: Uuid,
    email: Type.Optional(Email),
    payload: Type.Optional(Payload),
    attempt: Type.String({ pattern: '^[A-Za-z0-9_-]{16,64}$', errorMessage: 'must be the form attempt id' }),
  },
  { additionalProperties: false },
);
export const CardPaymentStarted = Type.Object({ clientSecret: Type.String(), returnUrl: Type.String() });

export const ValidateBody = Type.Object(
  {
    license: Type.String({ minLength: 1, maxLength: 100 }),
    email: Type.String({ minLength: 1, maxLength: 320 }),
  },
  { additionalProperties: false },
);

export const ValidateAnswer = Type.Union([
  Type.Object({
    success: Type.Literal(true),
    verified: Type.Literal(true),
    status: Type.Literal('successful'),
    purchase: Type.Object({
      id: Uuid,
      productId: Uuid,
      createdAt: Timestamp,
      transactionId: Type.String(),
      subscriptionId: Nullable(Uuid),
    }),
  }),
  Type.Object({
    success: Type.Literal(false),
    verified: Type.Literal(false),
    status: Type.Literal('not_verified'),
    /** purchase_not_verified when nothing matches; the license_* codes when its license stopped. */
    code: Type.Enum(['purchase_not_verified', 'license_revoked', 'license_suspended', 'license_expired']),
    message: Type.String(),
  }),
]);

export const CryptoEventAck = Type.Object({ received: Type.Literal(true) });

/** The hosted trial form's fields (application/x-www-form-urlencoded). */
export const TrialFormBody = Type.Object(
  {
    email: Type.Optional(Type.String({ maxLength: 320 })),
    hwuid: Type.Optional(Type.String({ maxLength: 200 })),
  },
  { additionalProperties: false },
);

/** Client software starting a trial for its buyer. */
export const TrialStartBody = Type.Object(
  {
    productId: Uuid,
    email: Email,
    hwuid: Type.Optional(Hwuid),
  },
  { additionalProperties: false },
);

export const TrialStarted = Type.Object({
  /** The trial license's id, as the seller's license routes know it. */
  trialId: Uuid,
  /** The key, bound to the device, for a trial on a device; null for a trial by e-mail (mailed). */
  licenseKey: Nullable(Type.String()),
  productId: Uuid,
  email: Type.String(),
  /** TRIAL, as verification shows it. */
  status: Type.Literal('TRIAL'),
  /** The end of the trial: the license's expiry until the buyer pays. */
  expiresAt: Timestamp,
  trialDays: Type.Integer(),
  /** Whether the hwuid given is bound to the license as its device (a trial on a device). */
  hwBound: Type.Boolean(),
});
