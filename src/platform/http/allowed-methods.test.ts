import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { AllowedMethods } from './allowed-methods.js';

describe('the methods a path takes (Allow)', () => {
  const allowed = new AllowedMethods();
  allowed.add('/v1/apps', ['GET', 'HEAD', 'POST']);
  allowed.add('/v1/apps/:appId', ['GET', 'HEAD']);
  allowed.add('/v1/apps/:appId', ['PATCH', 'DELETE']);
  allowed.add('/v1/apps/mine', ['PUT']);
  allowed.add('/v1/licenses/verify', ['POST', 'OPTIONS']);
  allowed.add('/dashboard/assets/app.js', ['GET', 'HEAD']);

  const cases: [path: string, methods: string][] = [
    ['/v1/apps', 'GET, HEAD, POST'],
    ['/v1/apps/', 'GET, HEAD, POST'],
    ['/v1/apps/0b7c1f0e-6d1a-4c39-9d0a-8f1f3f6b2a11', 'GET, HEAD, PATCH, DELETE'],
    // A static segment and a parameter both match: the router would try both, so both count.
    ['/v1/apps/mine', 'GET, HEAD, PUT, PATCH, DELETE'],
    ['/v1/apps/caf%C3%A9', 'GET, HEAD, PATCH, DELETE'],
    ['/v1/licenses/verify', 'POST, OPTIONS'],
    ['/dashboard/assets/app.js', 'GET, HEAD'],
    // A dot is a dot, not any character; a parameter is one segment, never empty.
    ['/dashboard/assets/appxjs', ''],
    ['/v1/apps/a/b', ''],
    ['/v1/apps//', ''],
    ['/v1/app', ''],
    ['/V1/APPS', ''],
    // A path that does not decode matches nothing.
    ['/v1/apps/%E0%A4%A', ''],
  ];
  for (const [path, methods] of cases) {
    test(`${path} → ${methods || 'none'}`, () => {
      assert.equal(allowed.at(path).join(', '), methods);
    });
  }
});
