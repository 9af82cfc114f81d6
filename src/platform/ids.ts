import { v7 } from 'uuid';

/**
 * Every record id comes from here: UUIDv7, so ids sort by creation time and lists can use
 * (created_at, id) as a stable order without a second sequence.
 */
export function newId(): string {
  return v7();
}

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: string): boolean {
  return UUID_PATTERN.test(value);
}
