/**
 * One error body for every failure on both hosts:
 * {"error":{"code","message","details"?,"requestId"}}. This table is the only place that
 * decides which HTTP status a code answers with.
 */
export const ERROR_STATUS = {
  validation_failed: 400,
  invalid_json: 400,
  bad_request: 400,
  currency_mismatch: 400,
  hwuid_required: 400,
  unauthorized: 401,
  invalid_credentials: 401,
  invalid_callback_secret: 401,
  payment_declined: 402,
  forbidden: 403,
  user_token_required: 403,
  app_scope_mismatch: 403,
  tier_required: 403,
  device_not_bound: 403,
  seat_required: 403,
  check_in_overdue: 403,
  feature_not_granted: 403,
  channel_not_granted: 403,
  download_link_invalid: 403,
  token_expired: 403,
  token_revoked: 403,
  invalid_signature: 403,
  invalid_token: 403,
  not_found: 404,
  license_not_found: 404,
  route_not_found: 404,
  method_not_allowed: 405,
  request_timeout: 408,
  download_link_expired: 410,
  conflict: 409,
  email_taken: 409,
  product_in_use: 409,
  app_in_use: 409,
  product_unavailable: 409,
  trial_already_used: 409,
  license_already_owned: 409,
  license_suspended: 409,
  license_revoked: 409,
  license_expired: 409,
  license_trial: 409,
  license_floating: 409,
  device_limit_reached: 409,
  subscription_inactive: 409,
  renewal_not_due: 409,
  idempotency_key_in_use: 409,
  release_exists: 409,
  artifact_exists: 409,
  release_not_draft: 409,
  release_yanked: 409,
  precondition_failed: 412,
  payload_too_large: 413,
  uri_too_long: 414,
  unsupported_media_type: 415,
  range_not_satisfiable: 416,
  idempotency_key_reused: 422,
  rate_limited: 429,
  headers_too_large: 431,
  internal_error: 500,
  not_ready: 503,
  database_unavailable: 503,
  artifact_store_unavailable: 503,
  overloaded: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export interface ErrorDetail {
  field: string;
  message: string;
}

export class AppError extends Error {
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: ErrorDetail[],
  ) {
    super(message);
    this.name = 'AppError';
    this.status = ERROR_STATUS[code];
  }
}

export function notFound(resource: string): AppError {
  return new AppError('not_found', `${resource} not found`);
}

export function invalidField(field: string, message: string): AppError {
  return new AppError('validation_failed', `${field}: ${message}`, [{ field, message }]);
}
