/** How one setting's text becomes a value, or a ConfigError that names the variable. */

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    problem: string,
  ) {
    super(`${variable}: ${problem}`);
    this.name = 'ConfigError';
  }
}

/** "a@b.example" or "Name <a@b.example>"; no line breaks, so it cannot smuggle in headers. */
export const MAIL_FROM_PATTERN = /^(?:[^<>\r\n]*<[^\s@<>]+@[^\s@<>]+>|[^\s@<>]+@[^\s@<>]+)$/;

export function checkSmtpUrl(value: string): void {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    // Never echo the value: it may carry the SMTP password.
    throw new ConfigError('SMTP_URL', 'must be an smtp:// or smtps:// URL');
  }
  if (url.protocol !== 'smtp:' && url.protocol !== 'smtps:') {
    throw new ConfigError('SMTP_URL', 'must use smtp:// (STARTTLS when offered) or smtps:// (TLS)');
  }
  if (!url.hostname) throw new ConfigError('SMTP_URL', 'must name the SMTP server host');
}

/** Comma-separated secrets of at least 32 characters each, none twice; null when unset. */
export function secretList(name: string, value: string | undefined): readonly string[] | null {
  if (value === undefined) return null;
  const secrets = value.split(',').map((secret) => secret.trim());
  if (secrets.some((secret) => secret.length < 32))
    throw new ConfigError(name, 'must be one or more secrets of at least 32 characters, separated by commas');
  if (new Set(secrets).size !== secrets.length) throw new ConfigError(name, 'names a secret twice');
  return Object.freeze(secrets);
}

/** Comma-separated keys of 32 bytes each in base64 (or base64url), none twice; null when unset. */
export function keyList(name: string, value: string | undefined): readonly string[] | null {
  if (value === undefined) return null;
  const keys = value.split(',').map((key) => key.trim());
  for (const key of keys) {
    if (!/^[A-Za-z0-9+/_-]{43}=?$/.test(key) || Buffer.from(key, 'base64').length !== 32) {
      throw new ConfigError(
        name,
        'must be one or more keys of 32 random bytes in base64 (openssl rand -base64 32), separated by commas',
      );
    }
  }
  const distinct = new Set(keys.map((key) => Buffer.from(key, 'base64').toString('hex')));
  if (distinct.size !== keys.length) throw new ConfigError(name, 'names a key twice');
  return Object.freeze(keys);
}

export function oneOf<T extends string>(name: string, value: string, allowed: readonly T[]): T {
  if (!(allowed as readonly string[]).includes(value)) {
    throw new ConfigError(name, `must be one of ${allowed.join(', ')} (got "${value}")`);
  }
  return value as T;
}

export function integer(name: string, value: string, min: number, max: number): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < min || n > max) {
    throw new ConfigError(name, `must be a whole number from ${min} to ${max} (got "${value}")`);
  }
  return n;
}

export function portNumber(name: string, value: string): number {
  return integer(name, value, 0, 65535);
}

export function httpUrl(name: string, value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(name, `must be an absolute http(s) URL (got "${value}")`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError(name, 'must use http or https');
  }
  return url.href.replace(/\/+$/, '');
}
