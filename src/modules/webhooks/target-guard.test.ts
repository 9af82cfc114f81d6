import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { guardedLookup, isPublicAddress, refuseUrl } from './target-guard.js';

describe('webhook target guard', () => {
  const refused: [string, string][] = [
    ['127.0.0.1', 'loopback'],
    ['127.1.2.3', 'loopback range'],
    ['::1', 'IPv6 loopback'],
    ['10.0.0.8', 'private 10/8'],
    ['172.16.5.4', 'private 172.16/12'],
    ['192.168.1.1', 'private 192.168/16'],
    ['169.254.169.254', 'link-local (cloud metadata)'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['fc00::1', 'unique local'],
    ['fd12:3456::1', 'unique local'],
    ['fe80::1', 'IPv6 link-local'],
    ['224.0.0.1', 'multicast'],
    ['ff02::1', 'IPv6 multicast'],
    ['0.0.0.0', 'unspecified'],
    ['255.255.255.255', 'broadcast'],
    ['240.0.0.1', 'reserved'],
    ['192.0.2.10', 'documentation (reserved)'],
    ['::ffff:10.0.0.1', 'IPv4-mapped private'],
    ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
    ['::ffff:169.254.169.254', 'IPv4-mapped metadata'],
    ['::ffff:7f00:1', 'IPv4-mapped loopback in hex'],
    ['::127.0.0.1', 'IPv4-compatible loopback'],
    ['::7f00:1', 'IPv4-compatible loopback in hex'],
    ['::a00:1', 'IPv4-compatible private'],
    ['::', 'IPv6 unspecified'],
    ['fec0::1', 'IPv6 site-local (deprecated)'],
    ['64:ff9b::7f00:1', 'NAT64 of loopback'],
    ['2002:7f00:1::', '6to4 of loopback'],
  ];
  for (const [address, label] of refused) {
    test(`refuses ${label} (${address})`, () => {
      assert.equal(isPublicAddress(address), false);
      const host = address.includes(':') ? `[${address}]` : address;
      assert.ok(refuseUrl(`https://${host}/hook`, { allowPrivate: false, requireHttps: false }));
    });
  }

  test('accepts public addresses', () => {
    for (const address of ['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111', '::ffff:8.8.8.8']) {
      assert.equal(isPublicAddress(address), true, address);
    }
  });

  test('refuses local names, other schemes and credentials; https in production', () => {
    const policy = { allowPrivate: false, requireHttps: false };
    for (const url of [
      'http://localhost/x',
      'https://api.localhost/x',
      'https://metadata.google.internal/',
      'ftp://example.com',
      'https://user:pw@example.com/',
      'not a url',
      'http://localhost./x',
      'http://2130706433/',
      'http://0x7f.1/',
      'http://017700000001/',
      'http://127.1/',
      'http://0/',
    ]) {
      assert.ok(refuseUrl(url, policy), url);
    }
    assert.equal(refuseUrl('https://hooks.example.com/in', policy), null);
    assert.ok(refuseUrl('http://hooks.example.com/in', { allowPrivate: false, requireHttps: true }));
    assert.equal(refuseUrl('http://127.0.0.1:9000/in', { allowPrivate: true, requireHttps: false }), null);
  });

  test('the connection lookup refuses a name that resolves to a private address', async () => {
    const lookup = guardedLookup({ allowPrivate: false, requireHttps: false });
    const error = await new Promise<NodeJS.ErrnoException | null>((resolve) =>
      lookup('localhost', {}, (err) => resolve(err)),
    );
    assert.equal(error?.code, 'EWEBHOOKTARGET');
    const allowed = guardedLookup({ allowPrivate: true, requireHttps: false });
    const address = await new Promise<string>((resolve, reject) =>
      allowed('localhost', {}, (err, addr) => (err ? reject(err) : resolve(addr as string))),
    );
    assert.ok(address === '127.0.0.1' || address === '::1');
  });
});
