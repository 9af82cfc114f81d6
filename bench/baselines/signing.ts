import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { SignJWT } from 'jose';

/**
 * Baseline: raw RS256 signing with jose (2048-bit key, claims as the service signs them), with
 * `concurrency` signatures in flight for `seconds`. jose signs through WebCrypto, which runs off
 * the event loop on libuv's thread pool, so this uses every core. Prints {perSecond,
 * cpuUsPerRequest}: the process's CPU (every thread) a signature.
 */
const { seconds, concurrency } = JSON.parse(process.argv[2] as string) as {
  seconds: number;
  concurrency: number;
};
const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const sign = () => {
  const iat = Math.floor(Date.now() / 1000);
  return new SignJWT({
    token_use: 'service_license_v1',
    svc_vt: 'standard',
    seller_tier: 'pro',
    status: 'ACTIVE',
    hw_bound: true,
    plan: 'pro',
    features: ['a', 'b'],
  })
    .setProtectedHeader({ alg: 'RS256', typ: 'JWT', kid: 'bench' })
    .setIssuer('http://localhost/v1')
    .setSubject(randomUUID())
    .setAudience(randomUUID())
    .setIssuedAt(iat)
    .setNotBefore(iat)
    .setExpirationTime(iat + 900)
    .setJti(randomUUID())
    .sign(privateKey);
};

let signed = 0;
const run = async (until: number) => {
  while (performance.now() < until) {
    await sign();
    signed++;
  }
};
// Warm up (JIT, key import), then count.
await Promise.all(Array.from({ length: concurrency }, () => run(performance.now() + 1000)));
signed = 0;
const started = performance.now();
const cpuBefore = process.cpuUsage();
await Promise.all(Array.from({ length: concurrency }, () => run(started + seconds * 1000)));
const elapsed = (performance.now() - started) / 1000;
const cpu = process.cpuUsage(cpuBefore);
console.log(
  JSON.stringify({
    perSecond: Math.round(signed / elapsed),
    cpuUsPerRequest: Math.round((cpu.user + cpu.system) / Math.max(1, signed)),
  }),
);
