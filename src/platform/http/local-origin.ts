import type { AddressInfo } from 'node:net';

/**
 * The origin this machine reaches a listener at (`http://127.0.0.1:8080`): a listener on every
 * address (0.0.0.0, ::) is reached over loopback, an IPv6 address in brackets.
 */
export function localOrigin({ address, port }: Pick<AddressInfo, 'address' | 'port'>): string {
  const local = address === '0.0.0.0' || address === '::' ? '127.0.0.1' : address;
  return `http://${local.includes(':') ? `[${local}]` : local}:${port}`;
}
