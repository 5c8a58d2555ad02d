import { othersAccess } from '../api/file-access.ts';
import { describeFsError, readBounded, type BoundedRead } from '../daemon/config-file.ts';
import { ConfigError, UsageError } from '../errors.ts';

/** Holds the emulator's keys or admin token, as `--api-key` and `--admin-token` do (not on the command line: any local user reads that). */
export const API_KEYS_VARIABLE = 'WSMIRROR_EMULATOR_API_KEYS';
export const ADMIN_TOKEN_VARIABLE = 'WSMIRROR_EMULATOR_ADMIN_TOKEN';
/** Keys and tokens are short: a larger file is a mistake (or `/dev/zero`). */
const MAX_SECRET_FILE_BYTES = 64 * 1024;

/** One key as `--api-key` takes it (`KEY` or `KEY=grants`), and how messages name where it came from (never by its value). */
export interface KeySpec {
  flag: string;
  place: string;
}

export interface EmulatorSecretFlags {
  apiKey: string[];
  apiKeyFile: string[];
  adminToken?: string;
  adminTokenFile?: string;
}

/**
 * The emulator's keys and admin token from every source: `--api-key` flags, `--api-key-file`
 * files (one key a line; blank lines and `#` comments skipped), WSMIRROR_EMULATOR_API_KEYS (keys
 * separated by whitespace, which no key holds); the admin token from one of `--admin-token`,
 * `--admin-token-file`, WSMIRROR_EMULATOR_ADMIN_TOKEN. A file other users can read or write
 * still works, with a warning (the key file's rule, api/file-access.ts).
 */
export function emulatorSecrets(
  flags: EmulatorSecretFlags, env: Readonly<Record<string, string | undefined>>,
): { keys: KeySpec[]; adminToken: string | undefined; warnings: string[] } {
  const warnings: string[] = [];
  const keys: KeySpec[] = flags.apiKey.map((flag, i) => ({ flag, place: `--api-key (the ${ordinal(i + 1)})` }));
  for (const file of flags.apiKeyFile) {
    const lines = readSecretFile(file, '--api-key-file', warnings).split('\n');
    lines.forEach((line, i) => {
      const flag = line.trim();
      if (flag !== '' && !flag.startsWith('#')) keys.push({ flag, place: `--api-key-file ${file} (line ${i + 1})` });
    });
  }
  const fromEnv = (env[API_KEYS_VARIABLE] ?? '').split(/\s+/).filter((k) => k !== '');
  fromEnv.forEach((flag, i) => keys.push({ flag, place: `${API_KEYS_VARIABLE} (the ${ordinal(i + 1)})` }));

  const envToken = env[ADMIN_TOKEN_VARIABLE]?.trim() || undefined;
  const given = [flags.adminToken !== undefined, flags.adminTokenFile !== undefined, envToken !== undefined].filter(Boolean).length;
  if (given > 1) throw new UsageError(`give the admin token one way only: --admin-token, --admin-token-file or ${ADMIN_TOKEN_VARIABLE}`);
  let adminToken = flags.adminToken ?? envToken;
  if (flags.adminTokenFile !== undefined) {
    adminToken = readSecretFile(flags.adminTokenFile, '--admin-token-file', warnings).trim();
    if (adminToken === '') throw new ConfigError(`--admin-token-file ${flags.adminTokenFile}: the file is empty`);
  }
  return { keys, adminToken, warnings };
}

function readSecretFile(file: string, option: string, warnings: string[]): string {
  let read: BoundedRead;
  try {
    read = readBounded(file, MAX_SECRET_FILE_BYTES);
  } catch (error) {
    throw new ConfigError(`${option} ${file}: cannot read the file: ${describeFsError(error)}`, { cause: error });
  }
  if (read.tooLarge) throw new ConfigError(`${option} ${file}: the file is larger than 64KB: it must hold only keys`);
  const access = read.regularFile ? othersAccess(read.mode) : undefined;
  if (access !== undefined) warnings.push(`${option} ${file} ${access}: chmod 600 it`);
  return read.text;
}

export function ordinal(n: number): string {
  const tens = n % 100;
  const suffix = tens >= 11 && tens <= 13 ? 'th' : (['th', 'st', 'nd', 'rd'][n % 10] ?? 'th');
  return `${n}${suffix}`;
}
