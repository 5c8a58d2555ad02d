/**
 * Loads the configuration: the YAML file (`--config FILE`, else `$WSMIRROR_CONFIG`, else
 * `./wsmirror.yaml` when present), then the environment on top, validated by the zod schema of
 * `config-schema.ts`. Every error is a ConfigError naming the file and key, or the environment
 * variable, and the bad value; the API key's value never appears in one.
 */
import { isAbsolute, resolve } from 'node:path';
import type * as z from 'zod';
import { formatPath } from '../api/issues.ts';
import { REDACTED, createRedactor } from '../api/secret-redaction.ts';
import type { ConfigFileMode } from './api-key-source.ts';
import { displayBaseUrl } from '../client/base-url.ts';
import { DEFAULT_PG_SCHEMA, displayMirrorUrl } from '../mirror/mirror-url.ts';
import { defaultCreateSettleMs } from '../sync/sync-options.ts';
import { ConfigError } from '../errors.ts';
import { CREDENTIAL_NAME, envKeyProblem, nonEmpty, resolveApiKey, type Findings } from './api-key-source.ts';
import { readConfigFile, type UnquotedValues } from './config-file.ts';
import { SECTIONS, configFileSchema, type ConfigFile } from './config-schema.ts';
import { showValue } from './config-values.ts';
import type { Config, LocalConfig, MirrorConfig, SettingSource, UpstreamConfig } from './config-types.ts';
import { CONFIG_FILE_VARIABLE, CONFIG_KEYS } from './config-variables.ts';
import { closestName } from './did-you-mean.ts';
import { settingSourceName } from './setting-source.ts';

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

export function loadConfig(options?: LoadConfigOptions & { upstream?: 'required' }): Config;
export function loadConfig(options: LoadConfigOptions & { upstream: 'optional' }): LocalConfig;
export function loadConfig(options: LoadConfigOptions = {}): Config | LocalConfig {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const named = options.file ?? nonEmpty(env[CONFIG_FILE_VARIABLE]);
  const file = readConfigFile(named ?? DEFAULT_FILE, named !== undefined, cwd);
  return build(file.raw, { ...options, env, cwd }, file.label, file.absolute, file.mode, file.unquoted);
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
  return build(raw, options, options.source ?? 'configuration', null, null);
}

/** A copy safe to log: the API key hidden, credentials in the base URL and any password in the mirror URL hidden. */
export function redactConfig(config: Config | LocalConfig): unknown {
  return {
    ...config,
    upstream: config.upstream === null ? null : { ...config.upstream, baseUrl: displayBaseUrl(config.upstream.baseUrl), apiKey: REDACTED },
    mirror: { ...config.mirror, url: displayMirrorUrl(config.mirror.url) },
  };
}

// ---------------------------------------------------------------------------------------------

/** `configMode`: the permission bits of the configuration file, when it is a regular file. */
function build(
  rawInput: unknown, options: ResolveConfigOptions, label: string, configFile: string | null, configMode: number | null,
  unquoted: UnquotedValues = new Map(),
): Config | LocalConfig {
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
    const quotingFixes = (path: readonly PropertyKey[]) => {
      const read = unquoted.get(JSON.stringify(path));
      return read !== undefined && !issueAt(withValueAt(merged, path, read.source), path) ? read : undefined;
    };
    const messages = parsed.error.issues.flatMap((issue) => describeIssue(issue, label, envSources, quotingFixes));
    // Problems of the key variables do not depend on the file: report them in the same pass.
    const keyProblem = envKeyProblem(env);
    if (keyProblem !== undefined) messages.push(keyProblem);
    throw new ConfigError(scrub(messages.join('; '), secrets));
  }
  const file = parsed.data;
  const problems: string[] = [];
  const heldIn = configFile === null || configMode === null ? null : { path: configFile, mode: configMode };
  const upstream = resolveUpstream(file, env, cwd, label, configFile !== null, heldIn, options.upstream ?? 'required', { problems, warnings, secrets });
  if (problems.length > 0) throw new ConfigError(scrub(problems.join('; '), secrets));

  // The mirror's own reading of the URL, with a relative SQLite path made absolute here.
  const { url: mirrorUrl, location } = file.mirror.url;
  const sourceOf = (section: keyof typeof SECTIONS, key: string): SettingSource => {
    const variable = envSources.get(`${section}.${key}`);
    if (variable !== undefined) return { variable };
    const inFile = raw[section];
    return isPlainObject(inFile) && inFile[key] !== undefined ? { label, configFile } : 'default';
  };
  const urlSource = sourceOf('mirror', 'url');
  const mirror: MirrorConfig =
    location.dialect === 'sqlite'
      ? {
          dialect: 'sqlite',
          url: mirrorUrl,
          urlSource,
          path: location.path === ':memory:' ? location.path : resolve(cwd, location.path),
          relativeTo: location.path === ':memory:' || isAbsolute(location.path) ? null : cwd,
          pgSchema: file.mirror.pgSchema,
          minFreeBytes: file.mirror.minFreeSpace,
        }
      : { dialect: 'postgres', url: mirrorUrl, urlSource, pgSchema: file.mirror.pgSchema, minFreeBytes: file.mirror.minFreeSpace };
  if (mirror.dialect === 'sqlite' && mirror.pgSchema !== DEFAULT_PG_SCHEMA) {
    warnings.push(unusedPgSchema(mirror, envSources.get('mirror.pgSchema') ?? label));
  }

  return deepFreeze({
    configFile,
    upstream,
    mirror,
    tables: {
      include: file.tables.include,
      exclude: file.tables.exclude,
      sources: { include: settingSourceName(sourceOf('tables', 'include')), exclude: settingSourceName(sourceOf('tables', 'exclude')) },
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
      createSettleMs: file.sync.createSettle ?? defaultCreateSettleMs(file.upstream.timeout),
    },
    http: { host: file.http.host, port: file.http.port },
    log: { level: file.log.level, format: file.log.format, progressIntervalMs: file.log.progressInterval },
    warnings: warnings.map((warning) => scrub(warning, secrets)),
  }) as Config | LocalConfig;
}

/**
 * A Postgres schema other than the default set for a SQLite mirror: most likely left from a
 * Postgres mirror, or a URL meant to be a Postgres one. Not an error (nothing is written to the
 * wrong place, and a shared environment may set it for every instance), but never silent: the
 * setting does nothing. The default itself (the example file spells it out) says nothing.
 */
function unusedPgSchema(mirror: MirrorConfig, where: string): string {
  return `${where}: mirror.pgSchema ${showValue(mirror.pgSchema)} is set, but the mirror is a SQLite file (${displayMirrorUrl(mirror.url)}): `
    + 'a Postgres schema does not apply to it and is ignored; remove the setting, or set mirror.url to a postgres:// URL';
}

function resolveUpstream(
  file: ConfigFile,
  env: Env,
  cwd: string,
  label: string,
  haveFile: boolean,
  configFile: ConfigFileMode | null,
  mode: 'required' | 'optional',
  found: Findings,
): UpstreamConfig | null {
  const { problems } = found;
  const key = resolveApiKey(file, env, cwd, label, configFile, found);
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

// ---------------------------------------------------------------------------------------------

/** Whether the configuration has a problem at this path or inside its value. */
function issueAt(raw: unknown, path: readonly PropertyKey[]): boolean {
  const parsed = configFileSchema.safeParse(raw);
  return !parsed.success && parsed.error.issues.some((issue) => path.every((key, i) => issue.path[i] === key));
}

/** A copy of `raw` with the value at `path` replaced. */
function withValueAt(raw: Record<string, unknown>, path: readonly PropertyKey[], value: unknown): Record<string, unknown> {
  const copy = structuredClone(raw);
  let node: unknown = copy;
  for (const key of path.slice(0, -1)) node = (node as Record<PropertyKey, unknown>)[key];
  (node as Record<PropertyKey, unknown>)[path.at(-1)!] = value;
  return copy;
}

function describeIssue(
  issue: z.core.$ZodIssue, label: string, envSources: Map<string, string>,
  quotingFixes: (path: readonly PropertyKey[]) => { source: string; value: number | boolean } | undefined,
): string[] {
  if (issue.code === 'unrecognized_keys') {
    return issue.keys.map(
      (key) => `${label}: ${formatPath('', [...issue.path, key])}: unknown key${suggest(issue.path, key)}`,
    );
  }
  for (let length = issue.path.length; length > 0; length--) {
    const variable = envSources.get(issue.path.slice(0, length).map(String).join('.'));
    if (variable !== undefined) return [`${variable}: ${issue.message}`];
  }
  // A value that is wrong only because YAML read it as a number says so; one wrong either way keeps its message.
  const read = quotingFixes(issue.path);
  return [`${label}: ${formatPath('', issue.path)}: ${read === undefined ? issue.message : readAsNumber(issue.path, read)}`];
}

/**
 * A value YAML read as a number or boolean where text was wanted (`workspaceId: 000000000001` is
 * the number 1): the value as written, and the quoting that keeps it text. The key is never shown.
 */
function readAsNumber(path: readonly PropertyKey[], read: { source: string; value: number | boolean }): string {
  const kind = typeof read.value === 'number' ? 'number' : 'boolean';
  const key = path.at(-1);
  const quoted = (text: string) => (typeof key === 'string' ? `${key}: ${JSON.stringify(text)}` : JSON.stringify(text));
  if (path.join('.') === 'upstream.apiKey') {
    return `YAML read the API key (unquoted) as a ${kind}: quote it, as in ${quoted('…')} (value not shown)`;
  }
  const as = String(read.value) === read.source ? `a ${kind}` : `the ${kind} ${String(read.value)}`;
  return `YAML read ${read.source} (unquoted) as ${as}: quote it, as in ${quoted(read.source)}`;
}

/** "did you mean apiKey?" for a misspelt key, else the list of keys allowed there. */
function suggest(path: readonly PropertyKey[], key: string): string {
  let known: string[];
  if (path.length === 0) known = Object.keys(SECTIONS);
  else if (path.length === 1 && typeof path[0] === 'string' && path[0] in SECTIONS) {
    known = Object.keys(SECTIONS[path[0] as keyof typeof SECTIONS].shape);
  } else return '';
  const close = closestName(key, known);
  return close !== undefined ? ` (did you mean ${close}?)` : ` (known keys: ${known.join(', ')})`;
}

/** Belt and braces: whatever path a message took, the key's value does not leave in it. */
function scrub(message: string, secrets: Set<string>): string {
  return createRedactor([...secrets])(message);
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

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    for (const item of Object.values(value)) deepFreeze(item);
    Object.freeze(value);
  }
  return value;
}
