/**
 * Loads the configuration: the YAML file (`--config FILE`, else `$WSMIRROR_CONFIG`, else
 * `./wsmirror.yaml` when present), then the environment on top, validated by the zod schema of
 * `config-schema.ts`. Every error is a ConfigError naming the file and key, or the environment
 * variable, and the bad value; the API key's value never appears in one.
 */
import { closeSync, existsSync, fstatSync, openSync, readSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import type { z } from 'zod';
import { formatPath } from '../api/issues.ts';
import { ConfigError } from '../errors.ts';
import {
  API_KEY_RULE,
  CONFIG_FILE_VARIABLE,
  CONFIG_KEYS,
  NON_CONFIG_VARIABLE,
  SECTIONS,
  checkApiKey,
  configFileSchema,
  hideUrlPassword,
} from './config-schema.ts';
import type { Config, ConfigFile, LocalConfig, MirrorConfig, UpstreamConfig } from './config-schema.ts';
import { formatSize } from './units.ts';

type Env = Readonly<Record<string, string | undefined>>;

export interface ResolveConfigOptions {
  /** Defaults to `process.env`. */
  env?: Env;
  /** Relative paths (SQLite file, key file, config file) resolve against this; default `process.cwd()`. */
  cwd?: string;
  /**
   * `required` (default; `run`, `sync`): base URL, workspace id and API key must be set.
   * `optional` (`status`): `upstream` is null when any of them is missing or the key is unreadable.
   */
  upstream?: 'required' | 'optional';
}

export interface LoadConfigOptions extends ResolveConfigOptions {
  /** `--config FILE`. Without it: `$WSMIRROR_CONFIG`, else `./wsmirror.yaml` if it exists. */
  file?: string;
}

const DEFAULT_FILE = 'wsmirror.yaml';
const CREDENTIAL_NAME = 'wsmirror-api-key';
/** An API key is a short token: a key file holding more is a mistake (or `/dev/zero`). */
const MAX_KEY_FILE_BYTES = 4096;
/** Far above any real configuration; a larger file is not one. */
const MAX_CONFIG_FILE_BYTES = 1024 ** 2;

export function loadConfig(options?: LoadConfigOptions & { upstream?: 'required' }): Config;
export function loadConfig(options: LoadConfigOptions & { upstream: 'optional' }): LocalConfig;
export function loadConfig(options: LoadConfigOptions = {}): Config | LocalConfig {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const named = options.file ?? nonEmpty(env[CONFIG_FILE_VARIABLE]);
  const file = readConfigFile(named ?? DEFAULT_FILE, named !== undefined, cwd);
  return build(file.raw, { ...options, env, cwd }, file.label, file.absolute);
}

/**
 * Validates a configuration given as an object (the shape of the YAML file) plus the environment.
 * `source` names it in messages; `demo` and tests use this instead of writing a file.
 */
export function resolveConfig(
  raw: unknown,
  options?: ResolveConfigOptions & { upstream?: 'required'; source?: string },
): Config;
export function resolveConfig(
  raw: unknown,
  options: ResolveConfigOptions & { upstream: 'optional'; source?: string },
): LocalConfig;
export function resolveConfig(
  raw: unknown,
  options: ResolveConfigOptions & { source?: string } = {},
): Config | LocalConfig {
  return build(raw, options, options.source ?? 'configuration', null);
}

/** `WSMIRROR_*` variables that configure nothing (likely typos), for the caller to warn about. */
export function unknownEnvironmentVariables(env: Env = process.env): string[] {
  const known = new Set(CONFIG_KEYS.map((k) => k.env));
  return Object.keys(env)
    .filter((name) => name.startsWith('WSMIRROR_') && !known.has(name) && !NON_CONFIG_VARIABLE.test(name))
    .sort();
}

/** A copy safe to log: the API key hidden, any password in the mirror URL hidden. */
export function redactConfig(config: Config | LocalConfig): unknown {
  return {
    ...config,
    upstream: config.upstream === null ? null : { ...config.upstream, apiKey: '[redacted]' },
    mirror: { ...config.mirror, url: hideUrlPassword(config.mirror.url) },
  };
}

// ---------------------------------------------------------------------------------------------

interface FileRead {
  label: string;
  absolute: string | null;
  raw: unknown;
}

function readConfigFile(name: string, explicit: boolean, cwd: string): FileRead {
  const absolute = resolve(cwd, name);
  let read: BoundedRead;
  try {
    read = readBounded(absolute, MAX_CONFIG_FILE_BYTES);
  } catch (error) {
    if (!explicit && errorCode(error) === 'ENOENT') return { label: name, absolute: null, raw: {} };
    throw new ConfigError(`${name}: cannot read the configuration file: ${describeFsError(error)}`, { cause: error });
  }
  if (read.tooLarge) throw new ConfigError(`${name}: the configuration file is larger than ${formatSize(MAX_CONFIG_FILE_BYTES)}`);
  const text = read.text;
  // Loaded only when there is a file to parse: most runs configure through the environment, and
  // the parser is some seventy modules of start-up.
  const { LineCounter, parseDocument } = createRequire(import.meta.url)('yaml') as typeof import('yaml');
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  // YAML errors carry no value text once prettyErrors is off; their position is enough.
  const problems = [...doc.errors, ...doc.warnings].map((problem) => {
    const { line, col } = lineCounter.linePos(problem.pos[0]);
    const message = problem.message.split('\n')[0] ?? problem.code;
    return `${name}: line ${line}, column ${col}: ${message}`;
  });
  if (problems.length > 0) throw new ConfigError(problems.join('; '));
  try {
    return { label: name, absolute, raw: doc.toJS() };
  } catch (error) {
    throw new ConfigError(`${name}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

function build(rawInput: unknown, options: ResolveConfigOptions, label: string, configFile: string | null): Config | LocalConfig {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const raw = stripNulls(rawInput ?? {});
  if (!isPlainObject(raw)) {
    throw new ConfigError(
      `${label}: must hold a mapping of sections (${Object.keys(SECTIONS).join(', ')}), not ${Array.isArray(raw) ? 'a list' : 'a single value'}`,
    );
  }
  const secrets = new Set<string>();
  const warnings: string[] = [];
  const fileKey = isPlainObject(raw.upstream) ? raw.upstream.apiKey : undefined;
  if (typeof fileKey === 'string') secrets.add(fileKey.trim());
  const envKey = nonEmpty(env.WSMIRROR_API_KEY);
  if (envKey !== undefined) secrets.add(envKey.trim());

  // Environment over file: each variable replaces one key. The key variables are handled below,
  // because any of them replaces both upstream.apiKey and upstream.apiKeyFile of the file.
  const merged = structuredClone(raw);
  const envSources = new Map<string, string>();
  for (const key of CONFIG_KEYS) {
    if (key.path === 'upstream.apiKey' || key.path === 'upstream.apiKeyFile') continue;
    const value = nonEmpty(env[key.env]);
    if (value === undefined) continue;
    const section = merged[key.section] ?? {};
    if (!isPlainObject(section)) continue; // the file's own error at that section will be reported
    section[key.key] = value;
    merged[key.section] = section;
    envSources.set(key.path, key.env);
  }

  const parsed = configFileSchema.safeParse(merged);
  if (!parsed.success) {
    const messages = parsed.error.issues.flatMap((issue) => describeIssue(issue, label, envSources));
    // Problems of the key variables do not depend on the file: report them in the same pass.
    const keyProblem = envKeyProblem(env);
    if (keyProblem !== undefined) messages.push(keyProblem);
    throw new ConfigError(scrub(messages.join('; '), secrets));
  }
  const file = parsed.data;
  const problems: string[] = [];
  const upstream = resolveUpstream(file, env, cwd, label, configFile !== null, options.upstream ?? 'required', { problems, warnings, secrets });
  if (problems.length > 0) throw new ConfigError(scrub(problems.join('; '), secrets));

  const mirrorUrl = file.mirror.url;
  const mirror: MirrorConfig =
    mirrorUrl.dialect === 'sqlite'
      ? {
          dialect: 'sqlite',
          url: mirrorUrl.url,
          path: mirrorUrl.path === ':memory:' ? mirrorUrl.path : resolve(cwd, mirrorUrl.path),
          pgSchema: file.mirror.pgSchema,
        }
      : { dialect: 'postgres', url: mirrorUrl.url, pgSchema: file.mirror.pgSchema };

  return deepFreeze({
    configFile,
    upstream,
    mirror,
    tables: {
      include: file.tables.include,
      exclude: file.tables.exclude,
      conflictPolicy: file.tables.conflictPolicy,
      conflictPolicies: file.tables.conflictPolicies,
    },
    sync: {
      schedule: file.sync.schedule,
      lookbackMs: file.sync.lookback,
      pageSize: file.sync.pageSize,
      backfillConcurrency: file.sync.backfillConcurrency,
      fullScanEveryMs: file.sync.fullScanEvery,
      maxDeleteShare: file.sync.maxDeleteShare,
      maxLagMs: file.sync.maxLag,
    },
    http: { host: file.http.host, port: file.http.port },
    log: { level: file.log.level, progressIntervalMs: file.log.progressInterval },
    warnings: warnings.map((warning) => scrub(warning, secrets)),
  }) as Config | LocalConfig;
}

function resolveUpstream(
  file: ConfigFile,
  env: Env,
  cwd: string,
  label: string,
  haveFile: boolean,
  mode: 'required' | 'optional',
  found: Findings,
): UpstreamConfig | null {
  const { problems } = found;
  const key = resolveApiKey(file, env, cwd, label, found);
  const where = haveFile ? `${label} or` : 'a configuration file (--config) or';
  const missing: string[] = [];
  if (file.upstream.baseUrl === undefined) missing.push(`upstream.baseUrl is not set: set it in ${where} WSMIRROR_BASE_URL`);
  if (file.upstream.workspaceId === undefined) {
    missing.push(`upstream.workspaceId is not set: set it in ${where} WSMIRROR_WORKSPACE_ID`);
  }
  if ('missing' in key) {
    missing.push(
      `no API key: set WSMIRROR_API_KEY or WSMIRROR_API_KEY_FILE, upstream.apiKey or upstream.apiKeyFile in ${haveFile ? label : 'a configuration file'}, or provide the systemd credential ${CREDENTIAL_NAME}`,
    );
  }
  if (mode === 'optional') {
    if (missing.length > 0 || 'error' in key) return null;
  } else {
    if ('error' in key) problems.push(key.error);
    problems.push(...missing);
  }
  if (problems.length > 0 || !('key' in key) || file.upstream.baseUrl === undefined || file.upstream.workspaceId === undefined) {
    return null;
  }
  return {
    baseUrl: file.upstream.baseUrl,
    apiKey: key.key,
    apiKeySource: key.source,
    workspaceId: file.upstream.workspaceId,
    timeoutMs: file.upstream.timeout,
    retries: file.upstream.retries,
    concurrency: file.upstream.concurrency,
    maxResponseBytes: file.upstream.maxResponseBytes,
  };
}

type KeyResult = { key: string; source: string } | { error: string } | { missing: true };

/** What building the configuration collects besides the values: errors, warnings, secrets to scrub. */
interface Findings {
  problems: string[];
  warnings: string[];
  secrets: Set<string>;
}

/**
 * The key, first found of: WSMIRROR_API_KEY, WSMIRROR_API_KEY_FILE, upstream.apiKey,
 * upstream.apiKeyFile, `$CREDENTIALS_DIRECTORY/wsmirror-api-key` (systemd LoadCredential).
 */
function resolveApiKey(file: ConfigFile, env: Env, cwd: string, label: string, found: Findings): KeyResult {
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
  if (apiKey !== undefined) return { key: apiKey, source: `${label} upstream.apiKey` };
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

function envKeyProblem(env: Env): string | undefined {
  const envKey = nonEmpty(env.WSMIRROR_API_KEY);
  if (envKey !== undefined && nonEmpty(env.WSMIRROR_API_KEY_FILE) !== undefined) {
    return 'WSMIRROR_API_KEY and WSMIRROR_API_KEY_FILE are both set: set only one';
  }
  if (envKey !== undefined && checkApiKey(envKey) === undefined) {
    return `WSMIRROR_API_KEY: the API key ${API_KEY_RULE} (value not shown)`;
  }
  return undefined;
}

/**
 * Reads a key file with a bound (`/dev/zero` or a log file named by mistake must not fill the
 * memory). A key file that other users can read still works, with a warning.
 */
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
  if (read.regularFile && (read.mode & 0o044) !== 0) {
    const mode = (read.mode & 0o777).toString(8).padStart(4, '0');
    found.warnings.push(`${where}: the API key file ${absolute} is readable by other users (mode ${mode}): chmod 600 it`);
  }
  return { key, source: source ?? absolute };
}

interface BoundedRead {
  /** The first `limit` bytes as UTF-8. */
  text: string;
  /** The file holds more than `limit` bytes (or never ends). */
  tooLarge: boolean;
  regularFile: boolean;
  /** Permission bits of the file opened (after symbolic links). */
  mode: number;
}

/** Reads at most `limit` bytes, plus one to tell whether there is more. */
function readBounded(path: string, limit: number): BoundedRead {
  const fd = openSync(path, 'r');
  try {
    const stat = fstatSync(fd);
    const buffer = Buffer.alloc(limit + 1);
    let length = 0;
    while (length < buffer.length) {
      const n = readSync(fd, buffer, length, buffer.length - length, null);
      if (n === 0) break;
      length += n;
    }
    return {
      text: buffer.toString('utf8', 0, Math.min(length, limit)),
      tooLarge: length > limit,
      regularFile: stat.isFile(),
      mode: stat.mode,
    };
  } finally {
    closeSync(fd);
  }
}

// ---------------------------------------------------------------------------------------------

function describeIssue(issue: z.core.$ZodIssue, label: string, envSources: Map<string, string>): string[] {
  if (issue.code === 'unrecognized_keys') {
    return issue.keys.map(
      (key) => `${label}: ${formatPath('', [...issue.path, key])}: unknown key${suggest(issue.path, key)}`,
    );
  }
  for (let length = issue.path.length; length > 0; length--) {
    const variable = envSources.get(issue.path.slice(0, length).map(String).join('.'));
    if (variable !== undefined) return [`${variable}: ${issue.message}`];
  }
  return [`${label}: ${formatPath('', issue.path)}: ${issue.message}`];
}

/** "did you mean apiKey?" for a misspelt key, else the list of keys allowed there. */
function suggest(path: readonly PropertyKey[], key: string): string {
  let known: string[];
  if (path.length === 0) known = Object.keys(SECTIONS);
  else if (path.length === 1 && typeof path[0] === 'string' && path[0] in SECTIONS) {
    known = Object.keys(SECTIONS[path[0] as keyof typeof SECTIONS].shape);
  } else return '';
  const squash = (s: string) => s.toLowerCase().replace(/[-_]/g, '');
  const close = known.find((k) => squash(k) === squash(key)) ?? known.find((k) => editDistance(squash(k), squash(key)) <= 2);
  return close !== undefined ? ` (did you mean ${close}?)` : ` (known keys: ${known.join(', ')})`;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current.push(Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + cost));
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}

/** Belt and braces: whatever path a message took, the key's value does not leave in it. */
function scrub(message: string, secrets: Set<string>): string {
  let out = message;
  for (const secret of secrets) if (secret.length > 0) out = out.split(secret).join('[redacted]');
  return out;
}

/** `key:` with no value in YAML means "use the default". */
function stripNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(stripNulls);
  if (!isPlainObject(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) if (item !== null) out[key] = stripNulls(item);
  return out;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date);
}

/** An empty variable counts as unset (compose files and unit files often pass empty ones). */
function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value;
}

function errorCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : undefined;
}

function describeFsError(error: unknown): string {
  switch (errorCode(error)) {
    case 'ENOENT':
      return 'no such file';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'EISDIR':
      return 'it is a directory';
    default:
      return error instanceof Error ? error.message : String(error);
  }
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    for (const item of Object.values(value)) deepFreeze(item);
    Object.freeze(value);
  }
  return value;
}
