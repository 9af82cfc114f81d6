import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import {
  fingerprintOf,
  linuxMachineId,
  machineFingerprint,
  osMachineId,
  parseIoregUuid,
  parseRegMachineGuid,
} from './machine-fingerprint.js';

let scratch: string;
before(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), 'fingerprint-'));
});
after(() => rm(scratch, { recursive: true, force: true }));

const IOREG = `+-o J314sAP  <class IOPlatformExpertDevice, id 0x100000214, registered, matched, active>
    {
      "IOPlatformSerialNumber" = "C02XXXXXXX"
      "IOPlatformUUID" = "5C3E1A2B-9D4F-4E6A-8B7C-1D2E3F4A5B6C"
    }
`;
const REG = `
HKEY_LOCAL_MACHINE\\SOFTWARE\\Microsoft\\Cryptography
    MachineGuid    REG_SZ    8f2b6c1e-3a4d-4c5e-9f60-7a8b9c0d1e2f

`;

describe('machineFingerprint', () => {
  test('is SHA-256 of the app id and the machine id, so two apps see two values', () => {
    const expected = createHash('sha256').update('app-1:5c3e1a2b-9d4f-4e6a-8b7c-1d2e3f4a5b6c').digest('hex');
    assert.equal(fingerprintOf('app-1', ' 5C3E1A2B-9D4F-4E6A-8B7C-1D2E3F4A5B6C\n'), expected);
    assert.notEqual(fingerprintOf('app-1', 'm'), fingerprintOf('app-2', 'm'));
  });

  test('each platform’s reader finds the id in what the system answers', async () => {
    assert.equal(parseIoregUuid(IOREG), '5C3E1A2B-9D4F-4E6A-8B7C-1D2E3F4A5B6C');
    assert.equal(parseIoregUuid('no such device'), null);
    assert.equal(parseRegMachineGuid(REG), '8f2b6c1e-3a4d-4c5e-9f60-7a8b9c0d1e2f');
    assert.equal(
      parseRegMachineGuid('ERROR: The system was unable to find the specified registry key'),
      null,
    );
    const dbus = path.join(scratch, 'dbus-machine-id');
    await writeFile(dbus, '0123456789abcdef0123456789abcdef\n');
    assert.equal(
      await linuxMachineId([path.join(scratch, 'none'), dbus]),
      '0123456789abcdef0123456789abcdef',
      'D-Bus’s file when systemd’s is missing',
    );
    assert.equal(await linuxMachineId([path.join(scratch, 'none')]), null);
  });

  test('on this Linux machine: /etc/machine-id hashed, the same on every call', async (context) => {
    if (process.platform !== 'linux' || !existsSync('/etc/machine-id')) {
      context.skip('not a Linux machine with /etc/machine-id');
      return;
    }
    const machineId = readFileSync('/etc/machine-id', 'utf8').trim();
    assert.equal(await osMachineId('linux'), machineId);
    assert.equal(await machineFingerprint('app-1'), fingerprintOf('app-1', machineId));
    assert.equal(await machineFingerprint('app-1'), await machineFingerprint('app-1'));
  });

  test('without a machine id, a random one written once to the fallback file', async () => {
    // A platform with no reader: the fallback answers, and answers the same the next time.
    assert.equal(await osMachineId('aix'), null);
    const file = path.join(scratch, 'nested', 'machine-id');
    const platform = Object.getOwnPropertyDescriptor(process, 'platform');
    Object.defineProperty(process, 'platform', { value: 'aix' });
    try {
      const first = await machineFingerprint('app-1', { fallbackFile: file });
      assert.equal(await machineFingerprint('app-1', { fallbackFile: file }), first);
      const stored = readFileSync(file, 'utf8').trim();
      assert.match(stored, /^[0-9a-f]{32}$/);
      assert.equal(first, fingerprintOf('app-1', stored));
      assert.equal(statSync(file).mode & 0o777, 0o600);
    } finally {
      if (platform) Object.defineProperty(process, 'platform', platform);
    }
  });

  test('the Python SDK answers the same fingerprint on this machine', async (context) => {
    const python = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../python/src');
    const run = spawnSync(
      'python3',
      [
        '-c',
        'import sys; from licensing_client import machine_fingerprint; print(machine_fingerprint(sys.argv[1]))',
        'app-7',
      ],
      { cwd: python, encoding: 'utf8', env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' } },
    );
    if (run.error || /No module named 'cryptography'/.test(run.stderr)) {
      context.skip('python3 with its cryptography package is not installed (.ci/run installs both)');
      return;
    }
    assert.equal(run.status, 0, run.stderr);
    assert.equal(run.stdout.trim(), await machineFingerprint('app-7'));
  });
});
