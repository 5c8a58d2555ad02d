/**
 * Where the API key comes from, first found of: WSMIRROR_API_KEY, WSMIRROR_API_KEY_FILE,
 * upstream.apiKey, upstream.apiKeyFile, `$CREDENTIALS_DIRECTORY/wsmirror-api-key` (systemd
 * LoadCredential). Whatever the source, the value is checked with the client's rule and never
 * appears in a message.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { othersAccess } from '../api/file-access.ts';
import { API_KEY_RULE, checkApiKey } from '../client/api-key.ts';
import { describeFsError, readBounded, type BoundedRead } from './config-file.ts';
import type { ConfigFile } from './config-schema.ts';
import { formatSize } from './units.ts';

type Env = Readonly<Record<string, string | undefined>>;

export const CREDENTIAL_NAME = 'wsmirror-api-key';
/** An API key is a short token: a key file holding more is a mistake (or `/dev/zero`). */
const MAX_KEY_FILE_BYTES = 4096;

export type KeyResult = { key: string; source: string } | { error: string } | { missing: true };

/** What building the configuration collects besides the values: errors, warnings, secrets to scrub. */
export interface Findings {
  problems: string[];
  warnings: string[];
  secrets: Set<string>;
}

/** The configuration file read, with its permission bits (a regular file's). */
export interface ConfigFileMode {
  path: string;
  mode: number;
}

export function resolveApiKey(file: ConfigFile, env: Env, cwd: string, label: string, configFile: ConfigFileMode | null, found: Findings): KeyResult {
  const envKey = nonEmpty(env.WSMIRROR_API_KEY);
  const envFile = nonEmpty(env.WSMIRROR_API_KEY_FILE);
  const problem = envKeyProblem(env);
  if (problem !== undefined) return { error: problem };
  if (envKey !== undefined) return { key: checkApiKey(envKey) ?? envKey, source: 'WSMIRROR_API_KEY' };
  if (envFile !== undefined) return readKeyFile(envFile, cwd, 'WSMIRROR_API_KEY_FILE', found);
  const { apiKey, apiKeyFile } = file.upstream;
  if (apiKey !== undefined && apiKeyFile !== undefined) {
    return { error: `${label}: upstream.apiKey and upstream.apiKeyFile are both set: keep only one` };
  }
  if (apiKey !== undefined) {
    // The same rule as for a key file: the file holding the key is one.
    const access = configFile === null ? undefined : othersAccess(configFile.mode);
    if (access !== undefined) {
      found.warnings.push(`${label}: upstream.apiKey is set in the configuration file ${configFile!.path}, which ${access}: `
        + 'chmod 600 it, or give the key in a file of its own (upstream.apiKeyFile, WSMIRROR_API_KEY_FILE)');
    }
    return { key: apiKey, source: `${label} upstream.apiKey` };
  }
  if (apiKeyFile !== undefined) return readKeyFile(apiKeyFile, cwd, `${label}: upstream.apiKeyFile`, found);
  const credentials = nonEmpty(env.CREDENTIALS_DIRECTORY);
  if (credentials !== undefined) {
    const path = join(credentials, CREDENTIAL_NAME);
    if (existsSync(path)) {
      const name = `systemd credential ${CREDENTIAL_NAME}`;
      return readKeyFile(path, cwd, name, found, name);
    }
  }
  return { missing: true };
}

/** Problems of the key variables alone (they do not depend on the file). */
export function envKeyProblem(env: Env): string | undefined {
  const envKey = nonEmpty(env.WSMIRROR_API_KEY);
  if (envKey !== undefined && nonEmpty(env.WSMIRROR_API_KEY_FILE) !== undefined) {
    return 'WSMIRROR_API_KEY and WSMIRROR_API_KEY_FILE are both set: set only one';
  }
  if (envKey !== undefined && checkApiKey(envKey) === undefined) {
    return `WSMIRROR_API_KEY: the API key ${API_KEY_RULE} (value not shown)`;
  }
  return undefined;
}

/** A key file that other users can read still works, with a warning. */
function readKeyFile(path: string, cwd: string, where: string, found: Findings, source?: string): KeyResult {
  const absolute = resolve(cwd, path);
  let read: BoundedRead;
  try {
    read = readBounded(absolute, MAX_KEY_FILE_BYTES);
  } catch (error) {
    return { error: `${where}: cannot read the API key file ${absolute}: ${describeFsError(error)}` };
  }
  if (read.tooLarge) {
    return { error: `${where}: the API key file ${absolute} is larger than ${formatSize(MAX_KEY_FILE_BYTES)}: it must hold only the key` };
  }
  const trimmed = read.text.trim();
  if (trimmed !== '') found.secrets.add(trimmed);
  if (trimmed === '') return { error: `${where}: the API key file ${absolute} is empty` };
  const key = checkApiKey(trimmed);
  if (key === undefined) {
    return { error: `${where}: the API key file ${absolute} holds more than a key: the API key ${API_KEY_RULE} (value not shown)` };
  }
  // Writable by others is as bad as readable: another user could put a key of theirs there.
  const access = read.regularFile ? othersAccess(read.mode) : undefined;
  if (access !== undefined) found.warnings.push(`${where}: the API key file ${absolute} ${access}: chmod 600 it`);
  return { key, source: source ?? absolute };
}

/** An empty variable counts as unset (compose files and unit files often pass empty ones). */
export function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value;
}
