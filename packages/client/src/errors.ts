/**
 * An error answer from the service: its HTTP status and the error body's code and request id.
 * A call that got no answer at all (network failure, timeout) has status 0 and code
 * `network_error`, with the underlying error as `cause`.
 */
export class LicensingApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly requestId: string | undefined,
    readonly details: { field: string; message: string }[] = [],
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'LicensingApiError';
  }
}

/** A license token that must not be trusted, with the reason. */
export class LicenseTokenError extends Error {
  constructor(
    readonly code:
      | 'invalid_token'
      | 'invalid_signature'
      | 'token_expired'
      | 'wrong_audience'
      | 'wrong_token_use'
      | 'key_set_unavailable',
    message: string,
  ) {
    super(message);
    this.name = 'LicenseTokenError';
  }
}
