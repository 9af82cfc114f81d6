import { createHmac, timingSafeEqual } from 'node:crypto';
import { invalidField } from '../../platform/errors.js';

/** Where a page of a timeline ends: the last entry's time and id (the keyset, newest first). */
export interface TimelinePosition {
  at: Date;
  id: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const TAG_BYTES = 16;

/**
 * A timeline's paging cursor: opaque to the client, and signed (HMAC-SHA256 under a key of this
 * service) over the position and the license it pages, so a forged, altered or borrowed cursor
 * is refused (400 naming `cursor`) instead of reading from a place the client chose.
 */
export function createTimelineCursors(secret: string) {
  const key = createHmac('sha256', secret).update('license-timeline-cursor').digest();
  const tagOf = (licenseId: string, payload: string) =>
    createHmac('sha256', key).update(`${licenseId}\n${payload}`).digest().subarray(0, TAG_BYTES);

  return {
    encode(licenseId: string, position: TimelinePosition): string {
      const payload = `${position.at.getTime()}.${position.id}`;
      return `${Buffer.from(payload).toString('base64url')}.${tagOf(licenseId, payload).toString('base64url')}`;
    },

    decode(licenseId: string, cursor: string): TimelinePosition {
      const refused = () => invalidField('cursor', 'is not a cursor this timeline answered');
      const [encoded, tag, extra] = cursor.split('.');
      if (!encoded || !tag || extra !== undefined) throw refused();
      const payload = Buffer.from(encoded, 'base64url').toString();
      const given = Buffer.from(tag, 'base64url');
      const expected = tagOf(licenseId, payload);
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw refused();
      const [ms, id] = payload.split('.');
      const at = new Date(Number(ms));
      if (!id || !UUID.test(id) || !/^\d+$/.test(ms ?? '') || Number.isNaN(at.getTime())) throw refused();
      return { at, id };
    },
  };
}

export type TimelineCursors = ReturnType<typeof createTimelineCursors>;
