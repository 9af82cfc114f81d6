import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';

/**
 * A device id (`hwuid`) for this machine and your app: the operating system's machine id hashed
 * with the app id, so it stays the same across reboots and reinstalls of your software, and two
 * apps never see the same value for one machine. Every SDK computes the same value:
 * lowercase hex SHA-256 of `${appId}:${machineId}`, the machine id trimmed and lower-cased.
 *
 * The machine id: `/etc/machine-id`, else D-Bus's `/var/lib/dbus/machine-id` (Linux);
 * `IOPlatformUUID` from `ioreg` (macOS); `MachineGuid` under
 * `HKLM\SOFTWARE\Microsoft\Cryptography` (Windows). Where none can be read (a container without
 * one, another system), the fallback is a random id written once to `fallbackFile` (by default
 * `~/.licensing-client/machine-id`) and read from there afterwards: stable for that user until
 * the file is removed.
 */
export async function machineFingerprint(
  appId: string,
  options: { fallbackFile?: string } = {},
): Promise<string> {
  if (typeof appId !== 'string' || appId.length === 0) throw new TypeError('appId: must be your app id');
  const machineId =
    (await osMachineId(process.platform)) ??
    (await fallbackMachineId(options.fallbackFile ?? join(homedir(), '.licensing-client', 'machine-id')));
  return fingerprintOf(appId, machineId);
}

/** The hash every SDK makes of an app id and a machine id. */
export function fingerprintOf(appId: string, machineId: string): string {
  return createHash('sha256').update(`${appId}:${machineId.trim().toLowerCase()}`).digest('hex');
}

/** The operating system's machine id, or null when it has none this code can read. */
export async function osMachineId(platform: NodeJS.Platform): Promise<string | null> {
  try {
    if (platform === 'linux') return await linuxMachineId(['/etc/machine-id', '/var/lib/dbus/machine-id']);
    if (platform === 'darwin')
      return parseIoregUuid(await run('ioreg', ['-rd1', '-c', 'IOPlatformExpertDevice']));
    if (platform === 'win32') {
      const key = 'HKEY_LOCAL_MACHINE\\SOFTWARE\\Microsoft\\Cryptography';
      return parseRegMachineGuid(await run('reg', ['query', key, '/v', 'MachineGuid', '/reg:64']));
    }
  } catch {
    // No reader, no permission, no such file: the fallback answers.
  }
  return null;
}

/** The first of `files` that holds an id (systemd writes 32 hex digits and a newline). */
export async function linuxMachineId(files: string[]): Promise<string | null> {
  for (const file of files) {
    const text = await readFile(file, 'utf8').catch(() => '');
    if (/^[0-9a-f]{32}$/i.test(text.trim())) return text.trim();
  }
  return null;
}

/** `"IOPlatformUUID" = "…"` in the output of `ioreg -rd1 -c IOPlatformExpertDevice`. */
export function parseIoregUuid(output: string): string | null {
  return /"IOPlatformUUID"\s*=\s*"([0-9A-Fa-f-]{36})"/.exec(output)?.[1] ?? null;
}

/** `MachineGuid    REG_SZ    …` in the output of `reg query`. */
export function parseRegMachineGuid(output: string): string | null {
  return /MachineGuid\s+REG_SZ\s+([0-9A-Fa-f-]{36})/.exec(output)?.[1] ?? null;
}

async function fallbackMachineId(file: string): Promise<string> {
  const held = (await readFile(file, 'utf8').catch(() => '')).trim();
  if (/^[0-9a-f]{32}$/.test(held)) return held;
  const made = randomBytes(16).toString('hex');
  await mkdir(dirname(file), { recursive: true });
  await writeFile(file, `${made}\n`, { mode: 0o600 });
  return made;
}

function run(command: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { timeout: 5000, windowsHide: true }, (error, stdout) =>
      error ? reject(error) : resolve(stdout),
    );
  });
}
