import Type, { type Static } from 'typebox';
import {
  DateTime,
  Email,
  Nullable,
  PageQuery,
  SortQuery,
  Timestamp,
  Uuid,
} from '../../platform/http/schemas.js';

export const ORDER_STATUSES = ['pending', 'paid', 'canceled', 'rejected'] as const;
export const WINDOWS = ['all', 'today', 'week', 'month'] as const;

export const CreatePaymentIntentBody = Type.Object(
  { productId: Uuid, email: Email },
  { additionalProperties: false },
);
export const PaymentIntentCreated = Type.Object({
  orderId: Uuid,
  transactionId: Type.String(),
  paymentIntentId: Type.String(),
  clientSecret: Type.String(),
  amount: Type.Number(),
  currency: Type.String(),
  paymentProvider: Type.String(),
  testMode: Type.Boolean(),
});

export const ConfirmPaymentBody = Type.Object(
  {
    paymentIntentId: Type.String({ minLength: 1, maxLength: 255 }),
    clientSecret: Type.String({ minLength: 1, maxLength: 512 }),
    /** Sandbox only: the test card the buyer paid with. */
    testCard: Type.Optional(Type.String({ minLength: 12, maxLength: 32 })),
  },
  { additionalProperties: false },
);
export const PaymentConfirmation = Type.Object({
  orderId: Uuid,
  transactionId: Type.String(),
  transactionStatus: Type.Enum(ORDER_STATUSES),
  statusReason: Type.String(),
  paymentProvider: Type.String(),
  licenseKey: Nullable(Type.String()),
});

export const Transaction = Type.Object({
  transactionId: Type.String(),
  transactionStatus: Type.Enum(ORDER_STATUSES),
  statusReason: Type.String(),
  licenseId: Nullable(Uuid),
  productId: Uuid,
  amount: Type.Number(),
  currency: Type.String(),
  email: Type.String(),
  timestamp: Timestamp,
  paymentProvider: Type.String(),
});

export const TransactionStatusBody = Type.Object(
  { transaction: Type.String({ minLength: 1, maxLength: 100 }) },
  { additionalProperties: false },
);
export const TransactionStatus = Type.Object({
  status: Type.Literal(200),
  transactionStatus: Type.Enum(ORDER_STATUSES),
  transactionStatusReason: Type.String(),
  info: Type.String(),
  transaction: Transaction,
});

export const MAX_BATCH = 200;
export const TransactionsBody = Type.Object(
  {
    transactionsId: Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
      minItems: 1,
      maxItems: MAX_BATCH,
      uniqueItems: true,
    }),
    limits: Type.Enum(WINDOWS),
    email: Type.Optional(Type.String({ minLength: 1, maxLength: 254 })),
  },
  { additionalProperties: false },
);
export const TransactionBatch = Type.Object({
  transactions: Type.Array(Transaction),
  total: Type.Integer(),
  limits: Type.Enum(WINDOWS),
  from: Nullable(Timestamp),
  to: Timestamp,
});

const OrderFields = {
  id: Uuid,
  productId: Uuid,
  email: Type.String(),
  amount: Type.Number(),
  currency: Type.String(),
  status: Type.Enum(ORDER_STATUSES),
  paymentProvider: Type.String(),
  transactionId: Type.String(),
  createdAt: Timestamp,
};
export const OrderSummary = Type.Object(OrderFields);
export const OrderDetail = Type.Object({ ...OrderFields, licenseId: Nullable(Uuid), updatedAt: Timestamp });
export const OrderParams = Type.Object({ id: Uuid }, { additionalProperties: false });
export const ORDER_SORTS = ['createdAt', 'amount', 'status', 'email'] as const;
export type OrderSortColumn = (typeof ORDER_SORTS)[number];

const OrderFilterFields = {
  status: Type.Optional(Type.Enum(ORDER_STATUSES)),
  productId: Type.Optional(Uuid),
  email: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 254,
      description: 'Matches any part of the buyer’s address, ignoring case (% and _ are plain characters)',
    }),
  ),
  from: Type.Optional(DateTime),
  to: Type.Optional(DateTime),
  sort: SortQuery(ORDER_SORTS, '-createdAt (newest first)'),
};
export const OrderListQuery = Type.Object(
  { ...PageQuery, ...OrderFilterFields },
  { additionalProperties: false },
);
/** The same filters and sort as the list, without paging: the export has every row. */
export const OrderExportQuery = Type.Object(OrderFilterFields, { additionalProperties: false });
export type OrderListFilter = Static<typeof OrderExportQuery>;
export const OrderList = Type.Object({
  orders: Type.Array(OrderSummary),
  total: Type.Integer(),
  limit: Type.Integer(),
  offset: Type.Integer(),
});

export const PartnerEventAck = Type.Object({ received: Type.Literal(true), duplicate: Type.Boolean() });

const DisputeFields = {
  id: Uuid,
  orderId: Uuid,
  status: Type.String(),
  amount: Type.Number(),
  currency: Type.String(),
  reason: Type.String(),
  createdAt: Timestamp,
};
export const DisputeSummary = Type.Object(DisputeFields);
export const DisputeDetail = Type.Object({
  ...DisputeFields,
  evidenceDueBy: Nullable(Timestamp),
  updatedAt: Timestamp,
});
export const DisputeParams = Type.Object({ id: Uuid }, { additionalProperties: false });
export const DisputeListQuery = Type.Object(
  { ...PageQuery, status: Type.Optional(Type.String({ minLength: 1, maxLength: 50 })) },
  { additionalProperties: false },
);
export const DisputeList = Type.Object({
  disputes: Type.Array(DisputeSummary),
  total: Type.Integer(),
  limit: Type.Integer(),
  offset: Type.Integer(),
});
