/**
 * The configuration contract: the typed `Config` the daemon runs on, the zod schema of the YAML
 * file (one strict object per section, so a misspelt key is an error), and the table of every
 * key with its environment variable. `config/wsmirror.example.yaml` documents each key; a test
 * keeps that file, this schema and the variable table in step.
 */
import { Cron } from 'croner';
import { z } from 'zod';
import { TABLE_PATTERN_RULE, isTablePattern } from '../mirror/table-filter.ts';
import { CONFLICT_POLICIES, type ConflictPolicy, type ConflictPolicyRule } from '../sync/push/conflict-policy.ts';
import { looksLikeDuration, parseDuration, parseSize } from './units.ts';

// ---------------------------------------------------------------------------------------------
// The typed result

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** When `wsmirror run` starts a cycle: every `everyMs`, or at the times of a cron expression. */
export type Schedule =
  | { readonly kind: 'interval'; readonly everyMs: number }
  | { readonly kind: 'cron'; readonly expression: string };

export interface UpstreamConfig {
  /** Base URL without `/api/v1` and without a trailing slash. */
  readonly baseUrl: string;
  /** The bearer key. Never log it: the logger redacts it, `redactConfig()` hides it. */
  readonly apiKey: string;
  /** Where the key came from (`WSMIRROR_API_KEY`, a file path, …): safe to log. */
  readonly apiKeySource: string;
  /** The 12-character workspace id. */
  readonly workspaceId: string;
  /** Per-request timeout. */
  readonly timeoutMs: number;
  /** Retries of a request after network errors, 429 and 5xx (0 = no retry). */
  readonly retries: number;
  /** Requests in flight at once. */
  readonly concurrency: number;
  /** A response body above this size fails the request (DESIGN §4.10). */
  readonly maxResponseBytes: number;
}

interface MirrorCommon {
  /** The URL as configured (for Postgres it may hold a password: log `redactConfig()` instead). */
  readonly url: string;
  /** Postgres schema holding the mirror (kept for SQLite too, where it is unused). */
  readonly pgSchema: string;
}
export type MirrorConfig =
  | (MirrorCommon & { readonly dialect: 'sqlite'; /** absolute path, or `:memory:` */ readonly path: string })
  | (MirrorCommon & { readonly dialect: 'postgres' });

export interface TablesConfig {
  /** `module.table` glob patterns (`*`, `?`); a table is mirrored when it matches one of these… */
  readonly include: readonly string[];
  /** …and none of these. */
  readonly exclude: readonly string[];
  /** Conflict policy of local edits in tables that no rule of `conflictPolicies` names. */
  readonly conflictPolicy: ConflictPolicy;
  /** Per-table conflict policies, in file order; the first matching pattern wins. */
  readonly conflictPolicies: readonly ConflictPolicyRule[];
}

export interface SyncConfig {
  readonly schedule: Schedule;
  /** Subtracted from the last `meta.asOf` to form the next `since` (DESIGN §4.3). */
  readonly lookbackMs: number;
  /** `limit` of list and changes pages (1 to 100). */
  readonly pageSize: number;
  /** Tables backfilled at once. */
  readonly backfillConcurrency: number;
  /** How often a table without history is fully scanned and diffed. */
  readonly fullScanEveryMs: number;
  /** A full-scan diff deleting more than this share of a table stops instead (0 to 1). */
  readonly maxDeleteShare: number;
  /** `/readyz` fails when a table lags upstream by more than this. */
  readonly maxLagMs: number;
}

export interface HttpConfig {
  readonly host: string;
  /** Port of `/healthz`, `/readyz`, `/metrics`; 0 = no HTTP server. */
  readonly port: number;
}

export interface LogConfig {
  readonly level: LogLevel;
  /** Off a terminal, long work logs a progress line this often. */
  readonly progressIntervalMs: number;
}

export interface Config {
  /** Absolute path of the file read, or null when none was. */
  readonly configFile: string | null;
  readonly upstream: UpstreamConfig;
  readonly mirror: MirrorConfig;
  readonly tables: TablesConfig;
  readonly sync: SyncConfig;
  readonly http: HttpConfig;
  readonly log: LogConfig;
  /** Problems that do not stop wsmirror (a key file other users can read), for the log. */
  readonly warnings: readonly string[];
}

/** For commands that never call upstream (`status`): the upstream section may be absent. */
export type LocalConfig = Omit<Config, 'upstream'> & { readonly upstream: UpstreamConfig | null };

// ---------------------------------------------------------------------------------------------
// Leaves: each accepts what YAML or an environment variable can hold, and names the bad value.

/** Renders a bad value for a message, hiding any password inside a URL. */
export function showValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  if (typeof value === 'string') {
    const hidden = hideUrlPassword(value);
    return JSON.stringify(hidden.length > 80 ? `${hidden.slice(0, 77)}...` : hidden);
  }
  return String(value);
}

/** `postgres://user:secret@host/db` → `postgres://user:***@host/db`. */
export function hideUrlPassword(text: string): string {
  return text.replace(/(\b[a-z][a-z0-9+.-]*:\/\/[^\s:/@]*:)[^\s@/]*@/gi, '$1***@');
}

function leaf<T>(expected: string | ((value: unknown) => string), parse: (value: unknown) => T | undefined) {
  return z.unknown().transform((value, ctx): T => {
    const out = parse(value);
    if (out === undefined) {
      const message = typeof expected === 'function' ? expected(value) : `${showValue(value)} is not ${expected}`;
      ctx.addIssue({ code: 'custom', message });
      return z.NEVER;
    }
    return out;
  });
}

function duration(options: { positive: boolean }) {
  const what = options.positive ? 'a duration above zero such as 30s' : 'a duration such as 10s';
  return leaf(what, (value) => {
    const ms = parseDuration(value);
    return ms === undefined || (options.positive && ms <= 0) ? undefined : ms;
  });
}

function integer(min: number, max: number) {
  return leaf(`an integer from ${min} to ${max}`, (value) => {
    const n = typeof value === 'string' && /^\s*-?\d+\s*$/.test(value) ? Number(value) : value;
    return typeof n === 'number' && Number.isInteger(n) && n >= min && n <= max ? n : undefined;
  });
}

const share = leaf('a share from 0 to 1 such as 0.5 or 50%', (value) => {
  let n: unknown = value;
  if (typeof value === 'string') {
    const text = value.trim();
    n = text.endsWith('%') ? Number(text.slice(0, -1)) / 100 : text === '' ? Number.NaN : Number(text);
  }
  return typeof n === 'number' && Number.isFinite(n) && n >= 0 && n <= 1 ? n : undefined;
});

function size(minBytes: number) {
  return leaf(`a size of at least ${minBytes} bytes such as 64MB`, (value) => {
    const bytes = parseSize(value);
    return bytes !== undefined && bytes >= minBytes ? bytes : undefined;
  });
}

function nonEmptyString(what: string) {
  return leaf(what, (value) => (typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined));
}

const baseUrl = leaf(
  (value) =>
    typeof value === 'string' && /\/api\/v1\/?$/.test(value)
      ? `${showValue(value)} ends in /api/v1: give the base URL only, wsmirror adds the path`
      : `${showValue(value)} is not an http:// or https:// URL without query or fragment`,
  (value) => {
    if (typeof value !== 'string') return undefined;
    let url: URL;
    try {
      url = new URL(value.trim());
    } catch {
      return undefined;
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
    if (url.search !== '' || url.hash !== '' || /\/api\/v1\/?$/.test(url.pathname)) return undefined;
    return url.href.replace(/\/+$/, '');
  },
);

const workspaceId = leaf(
  (value) => `${showValue(value)} is not a workspace id (exactly 12 characters of a-z and 0-9)`,
  (value) => (typeof value === 'string' && /^[a-z0-9]{12}$/.test(value.trim()) ? value.trim() : undefined),
);

/** Never echoes the value: it is the secret. */
export const API_KEY_RULE = 'must be a non-empty string without spaces or line breaks';
export function checkApiKey(value: unknown): string | undefined {
  return typeof value === 'string' && /^[\x21-\x7e]+$/.test(value.trim()) ? value.trim() : undefined;
}
const apiKey = leaf(() => `the API key ${API_KEY_RULE} (value not shown)`, checkApiKey);

export type MirrorUrl = { dialect: 'sqlite'; url: string; path: string } | { dialect: 'postgres'; url: string };

const mirrorUrl = leaf(
  (value) => `${showValue(value)} is not sqlite:PATH or a postgres:// (postgresql://) URL`,
  (value): MirrorUrl | undefined => {
    if (typeof value !== 'string') return undefined;
    const url = value.trim();
    if (url.startsWith('sqlite:')) {
      const path = url.slice('sqlite:'.length);
      return path === '' ? undefined : { dialect: 'sqlite', url, path };
    }
    if (!/^postgres(?:ql)?:\/\//.test(url)) return undefined;
    try {
      new URL(url);
    } catch {
      return undefined;
    }
    return { dialect: 'postgres', url };
  },
);

const pgSchema = leaf(
  (value) => `${showValue(value)} is not a Postgres schema name (1 to 63 bytes)`,
  (value) =>
    typeof value === 'string' && value !== '' && Buffer.byteLength(value) <= 63 && !value.includes('\0')
      ? value
      : undefined,
);

const SCHEDULE_EXPECTED = 'a cron expression such as "*/5 * * * *" or an interval such as 30s';

/** Reads `30s` (or a bare number of seconds) as an interval, anything else as a cron expression. */
export function parseSchedule(value: unknown): { schedule: Schedule } | { error: string } {
  if (typeof value === 'number' || (typeof value === 'string' && looksLikeDuration(value))) {
    const everyMs = parseDuration(value);
    if (everyMs === undefined || everyMs <= 0) return { error: `${showValue(value)} is not ${SCHEDULE_EXPECTED}` };
    return { schedule: { kind: 'interval', everyMs } };
  }
  if (typeof value !== 'string' || value.trim() === '') return { error: `${showValue(value)} is not ${SCHEDULE_EXPECTED}` };
  const expression = value.trim().replace(/\s+/g, ' ');
  let cron: Cron;
  try {
    cron = new Cron(expression);
  } catch (error) {
    const why = error instanceof Error ? error.message.replace(/^CronPattern: /, '') : String(error);
    return { error: `${showValue(value)} is not ${SCHEDULE_EXPECTED} (${why})` };
  }
  if (cron.nextRun() === null) return { error: `${showValue(value)} never fires` };
  return { schedule: { kind: 'cron', expression } };
}

const schedule = z.unknown().transform((value, ctx): Schedule => {
  const parsed = parseSchedule(value);
  if ('error' in parsed) {
    ctx.addIssue({ code: 'custom', message: parsed.error });
    return z.NEVER;
  }
  return parsed.schedule;
});

// The rule is the mirror's, which compiles these patterns.
const tablePattern = leaf(
  (value) => `${showValue(value)} is not ${TABLE_PATTERN_RULE}`,
  (value) => (typeof value === 'string' && isTablePattern(value.trim()) ? value.trim() : undefined),
);
// The environment gives lists comma-separated.
const tablePatterns = z.preprocess(
  (value) => (typeof value === 'string' ? value.split(',').map((s) => s.trim()).filter((s) => s !== '') : value),
  z.array(tablePattern, { error: 'must be a list of table patterns' }),
);

const CONFLICT_POLICY_RULE = `a conflict policy (${CONFLICT_POLICIES.join(', ')})`;

function toConflictPolicy(value: unknown): ConflictPolicy | undefined {
  const text = typeof value === 'string' ? value.trim() : undefined;
  return CONFLICT_POLICIES.find((policy) => policy === text);
}

const conflictPolicy = leaf(`${CONFLICT_POLICY_RULE}`, toConflictPolicy);

/**
 * A mapping of table pattern to policy; the environment gives `pattern=policy` pairs separated
 * by commas (`crm.deals=manual,sales.*=upstream-wins`).
 */
const conflictPolicies = z.unknown().transform((value, ctx): ConflictPolicyRule[] => {
  let entries: [string, unknown][];
  if (typeof value === 'string') {
    entries = [];
    for (const pair of value.split(',').map((s) => s.trim()).filter((s) => s !== '')) {
      const at = pair.indexOf('=');
      if (at < 0) {
        ctx.addIssue({ code: 'custom', message: `${showValue(pair)} is not pattern=policy, such as crm.deals=manual` });
        return z.NEVER;
      }
      entries.push([pair.slice(0, at).trim(), pair.slice(at + 1)]);
    }
  } else if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    entries = Object.entries(value);
  } else {
    ctx.addIssue({ code: 'custom', message: 'must be a mapping of table pattern to conflict policy' });
    return z.NEVER;
  }
  const rules: ConflictPolicyRule[] = [];
  for (const [pattern, given] of entries) {
    const policy = toConflictPolicy(given);
    if (!isTablePattern(pattern)) ctx.addIssue({ code: 'custom', path: [pattern], message: `${showValue(pattern)} is not ${TABLE_PATTERN_RULE}` });
    else if (policy === undefined) ctx.addIssue({ code: 'custom', path: [pattern], message: `${showValue(given)} is not ${CONFLICT_POLICY_RULE}` });
    else rules.push({ pattern, policy });
  }
  return rules;
});

const host = nonEmptyString('a host name or address');

const logLevel = leaf(
  (value) => `${showValue(value)} is not a log level (${LOG_LEVELS.join(', ')})`,
  (value) => {
    const text = typeof value === 'string' ? value.trim().toLowerCase() : undefined;
    return LOG_LEVELS.find((level) => level === text);
  },
);

// ---------------------------------------------------------------------------------------------
// The file: one strict object per section. Defaults live here and only here.

const SECTION_ERROR = { error: 'must be a mapping of keys to values' };

export const DEFAULTS = {
  mirrorUrl: 'sqlite:./wsmirror.db',
  pgSchema: 'public',
  schedule: { kind: 'interval', everyMs: 30_000 } as Schedule,
} as const;

export const upstreamSection = z.strictObject(
  {
    baseUrl: baseUrl.optional(),
    apiKey: apiKey.optional(),
    apiKeyFile: nonEmptyString('a file path').optional(),
    workspaceId: workspaceId.optional(),
    timeout: duration({ positive: true }).default(30_000),
    retries: integer(0, 100).default(6),
    concurrency: integer(1, 64).default(4),
    maxResponseBytes: size(1024).default(64 * 1024 ** 2),
  },
  SECTION_ERROR,
);

export const mirrorSection = z.strictObject(
  {
    url: mirrorUrl.default({ dialect: 'sqlite', url: DEFAULTS.mirrorUrl, path: './wsmirror.db' }),
    pgSchema: pgSchema.default(DEFAULTS.pgSchema),
  },
  SECTION_ERROR,
);

export const tablesSection = z.strictObject(
  {
    include: tablePatterns.default(['*']),
    exclude: tablePatterns.default([]),
    conflictPolicy: conflictPolicy.default('local-wins'),
    conflictPolicies: conflictPolicies.default([]),
  },
  SECTION_ERROR,
);

export const syncSection = z.strictObject(
  {
    schedule: schedule.default(DEFAULTS.schedule),
    lookback: duration({ positive: false }).default(10_000),
    pageSize: integer(1, 100).default(100),
    backfillConcurrency: integer(1, 64).default(4),
    fullScanEvery: duration({ positive: true }).default(600_000),
    maxDeleteShare: share.default(0.5),
    maxLag: duration({ positive: true }).default(300_000),
  },
  SECTION_ERROR,
);

export const httpSection = z.strictObject(
  {
    host: host.default('127.0.0.1'),
    port: integer(0, 65535).default(9464),
  },
  SECTION_ERROR,
);

export const logSection = z.strictObject(
  {
    level: logLevel.default('info'),
    progressInterval: duration({ positive: true }).default(10_000),
  },
  SECTION_ERROR,
);

export const SECTIONS = {
  upstream: upstreamSection,
  mirror: mirrorSection,
  tables: tablesSection,
  sync: syncSection,
  http: httpSection,
  log: logSection,
} as const;

export const configFileSchema = z.strictObject(
  {
    upstream: upstreamSection.prefault({}),
    mirror: mirrorSection.prefault({}),
    tables: tablesSection.prefault({}),
    sync: syncSection.prefault({}),
    http: httpSection.prefault({}),
    log: logSection.prefault({}),
  },
  { error: 'must be a mapping of sections (upstream, mirror, tables, sync, http, log)' },
);

export type ConfigFile = z.output<typeof configFileSchema>;

// ---------------------------------------------------------------------------------------------
// Environment variables: the contract names of DESIGN §2, and WSMIRROR_<SECTION>_<KEY> for the rest.

const CONTRACT_VARIABLES: Readonly<Record<string, string>> = {
  'upstream.baseUrl': 'WSMIRROR_BASE_URL',
  'upstream.apiKey': 'WSMIRROR_API_KEY',
  'upstream.apiKeyFile': 'WSMIRROR_API_KEY_FILE',
  'upstream.workspaceId': 'WSMIRROR_WORKSPACE_ID',
  'mirror.url': 'WSMIRROR_MIRROR_URL',
  'mirror.pgSchema': 'WSMIRROR_PG_SCHEMA',
  'sync.schedule': 'WSMIRROR_SCHEDULE',
  'http.port': 'WSMIRROR_HTTP_PORT',
  'log.level': 'WSMIRROR_LOG_LEVEL',
};

/** Names the configuration file when `--config` is not given. */
export const CONFIG_FILE_VARIABLE = 'WSMIRROR_CONFIG';

/** `WSMIRROR_*` variables that belong to the project's tooling, not to the configuration. */
export const NON_CONFIG_VARIABLE = /^WSMIRROR_(?:TEST_|NODE24_DIR$|CONFIG$)/;

export interface ConfigKey {
  /** `section.key`, as in the file. */
  readonly path: string;
  readonly section: keyof typeof SECTIONS;
  readonly key: string;
  /** The environment variable that overrides it. */
  readonly env: string;
}

function genericVariable(section: string, key: string): string {
  return `WSMIRROR_${section}_${key.replace(/([a-z0-9])([A-Z])/g, '$1_$2')}`.toUpperCase();
}

/** Every key of the file, in file order, with its environment variable. */
export const CONFIG_KEYS: readonly ConfigKey[] = Object.freeze(
  Object.entries(SECTIONS).flatMap(([section, schema]) =>
    Object.keys(schema.shape).map((key) => {
      const path = `${section}.${key}`;
      return Object.freeze({
        path,
        section: section as keyof typeof SECTIONS,
        key,
        env: CONTRACT_VARIABLES[path] ?? genericVariable(section, key),
      });
    }),
  ),
);
