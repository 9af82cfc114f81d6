import assert from 'node:assert/strict';
import type { TestServer } from './harness.js';

/** A file of a release as a test uploads it; platform and arch omitted: every one. */
export interface TestFile {
  bytes: Buffer;
  platform?: string;
  arch?: string;
}

/** A file the seller hosts, as a test names it: its address and what the seller declares of it. */
export interface HostedTestFile {
  url: string;
  platform?: string;
  arch?: string;
  size?: number;
  sha256?: string;
  sha512?: string;
}

/**
 * A release of the owner's app with these files (name → file), uploaded (or, hosted by the
 * seller, named by their address) through the API and published unless `draft`: the way a
 * seller's CI job makes one.
 */
export async function publishRelease(
  server: TestServer,
  owner: { token: string; appId: string },
  version: string,
  files: Record<string, TestFile | HostedTestFile>,
  options: { channel?: string; notes?: string; requiredFeatures?: string[]; draft?: boolean } = {},
): Promise<{ id: string; version: string }> {
  const { draft, ...fields } = options;
  const created = (
    await server.api.post(`/apps/${owner.appId}/releases`, { version, ...fields }, { token: owner.token })
  ).expect(201).body as { id: string; version: string };
  for (const [filename, file] of Object.entries(files)) {
    if ('url' in file) {
      const where = `/apps/${owner.appId}/releases/${created.id}/artifacts`;
      (await server.api.post(where, { filename, ...file }, { token: owner.token })).expect(201);
      continue;
    }
    const query = new URLSearchParams({
      ...(file.platform ? { platform: file.platform } : {}),
      ...(file.arch ? { arch: file.arch } : {}),
    });
    const res = await fetch(
      `${server.service.coreUrl}/v1/apps/${owner.appId}/releases/${created.id}/artifacts/${filename}?${query}`,
      {
        method: 'PUT',
        headers: { authorization: `Bearer ${owner.token}`, 'content-type': 'application/octet-stream' },
        body: file.bytes,
      },
    );
    assert.equal(res.status, 201, await res.text());
  }
  if (!draft) {
    const path = `/apps/${owner.appId}/releases/${created.id}/publish`;
    (await server.api.post(path, undefined, { token: owner.token })).expect(200);
  }
  return created;
}

/**
 * An address the service hands out (built on PUBLIC_BASE_URL, as a client outside sees it) turned
 * into the same path on the test server's listener.
 */
export function reachable(server: TestServer, url: string): string {
  assert.ok(url.startsWith(`${server.config.apiBaseUrl}/`), url);
  return `${server.service.coreUrl}/v1${url.slice(server.config.apiBaseUrl.length)}`;
}
