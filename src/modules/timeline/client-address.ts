import ipaddr from 'ipaddr.js';
import type { ClientAddressPolicy } from '../../platform/db/schema.js';

/**
 * What a timeline entry keeps of the address a client called from, as the app's setting says:
 * all of it, its network (IPv4 /24, IPv6 /48, written with the prefix length), or nothing.
 * Applied before the entry is buffered, so a full address the seller chose not to keep is never
 * held, not even in memory until the next flush. An IPv4 address mapped into IPv6 is IPv4.
 */
export function keptAddress(address: string | null | undefined, policy: ClientAddressPolicy): string | null {
  if (!address || policy === 'none') return null;
  const v4 = address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address;
  if (policy === 'full') return v4;
  if (!v4.includes(':')) {
    const lastDot = v4.lastIndexOf('.');
    return lastDot > 0 ? `${v4.slice(0, lastDot)}.0/24` : null;
  }
  if (!ipaddr.IPv6.isValid(v4)) return null;
  const parts = ipaddr.IPv6.parse(v4).parts.slice(0, 3);
  return `${ipaddr.IPv6.parse(`${parts.map((part) => part.toString(16)).join(':')}::`).toString()}/48`;
}
