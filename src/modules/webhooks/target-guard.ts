import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import ipaddr from 'ipaddr.js';

/**
 * Webhook targets must be on the public internet: never loopback, private, link-local (cloud
 * metadata at 169.254.169.254), carrier-grade NAT, unique-local, multicast or reserved
 * addresses, whether written as IP literals (decimal, octal and hex IPv4 are normalised by the
 * URL parser), IPv4-mapped or IPv4-compatible IPv6, or names that resolve to them.
 * The check runs at registration and again inside the connection's own DNS lookup, so a name
 * cannot resolve to a public address for the check and a private one for the request.
 */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  // process() turns IPv4-mapped IPv6 (::ffff:10.0.0.1) into the IPv4 address it carries.
  const parsed = ipaddr.process(address);
  // IPv4-compatible IPv6 (::127.0.0.1, deprecated by RFC 4291) reads as plain unicast to
  // ipaddr.js, yet some stacks route it to the IPv4 address it carries.
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).parts.slice(0, 6).every((part) => part === 0)) {
    return false;
  }
  // An allow-list: every special range ipaddr.js knows, today's and any it adds, is refused.
  return parsed.range() === 'unicast';
}

export interface TargetPolicy {
  /** Development and tests: loopback and private targets allowed. */
  allowPrivate: boolean;
  /** Production: only https. */
  requireHttps: boolean;
}

/** Why a URL cannot be a webhook target, or null when it can (before DNS). */
export function refuseUrl(url: string, policy: TargetPolicy): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'must be an absolute URL';
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') return 'must use http or https';
  if (policy.requireHttps && parsed.protocol !== 'https:') return 'must use https';
  if (parsed.username || parsed.password) return 'must not carry credentials';
  // Brackets off an IPv6 literal; a trailing dot off a fully qualified name (localhost.).
  const host = parsed.hostname.replace(/^\[|\]$/g, '').replace(/\.$/, '');
  if (ipaddr.isValid(host) && !policy.allowPrivate && !isPublicAddress(host)) {
    return 'must not point at a private, loopback, link-local or reserved address';
  }
  if (
    !policy.allowPrivate &&
    (host === 'localhost' || host.endsWith('.localhost') || host.endsWith('.internal'))
  ) {
    return 'must not point at a local host name';
  }
  return null;
}

type LookupCallback = (
  error: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/**
 * A dns.lookup for outgoing webhook connections that refuses non-public answers, so the address
 * actually connected to is the one that was checked.
 */
export function guardedLookup(policy: TargetPolicy) {
  return (hostname: string, options: object, callback: LookupCallback): void => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
      if (error) return callback(error, []);
      const list = addresses as LookupAddress[];
      const refused = policy.allowPrivate ? undefined : list.find((entry) => !isPublicAddress(entry.address));
      if (refused || list.length === 0) {
        const blocked = Object.assign(
          new Error(`webhook target ${hostname} resolves to a non-public address`),
          {
            code: 'EWEBHOOKTARGET',
          },
        );
        return callback(blocked, []);
      }
      if ((options as { all?: boolean }).all) return callback(null, list);
      const first = list[0] as LookupAddress;
      return callback(null, first.address, first.family);
    });
  };
}
