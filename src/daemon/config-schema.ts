/**
 * The schema of the configuration file: one strict object per section, so a misspelt key is an
 * error. Each rule and each default comes from the module it configures (the client's base URL,
 * key, retries and limits; the mirror's URL and schema name; the engine's sync options; the
 * scheduler's, HTTP server's, logger's and progress's own); this file only assembles them.
 * `config/wsmirror.example.yaml` documents each key; a test keeps that file and this schema in step.
 */
import * as z from 'zod';
import { workspaceIdSchema } from '../api/identifiers.ts';
import { MAX_PAGE_LIMIT } from '../api/paging.ts';
import { API_KEY_RULE, checkApiKey } from '../client/api-key.ts';
import { checkBaseUrl, displayBaseUrl } from '../client/base-url.ts';
import { CLIENT_DEFAULTS, CLIENT_LIMITS } from '../client/client-options.ts';
import { DEFAULT_PG_SCHEMA, PG_SCHEMA_RULE, checkPgSchema, displayMirrorUrl, parseMirrorUrl, postgresUrlProblem, type MirrorLocation } from '../mirror/mirror-url.ts';
import { TABLE_PATTERN_RULE, isTablePattern } from '../mirror/table-filter.ts';
import { CONFLICT_POLICIES, type ConflictPolicy, type ConflictPolicyRule } from '../sync/push/conflict-policy.ts';
import { SYNC_DEFAULTS, SYNC_LIMITS } from '../sync/sync-options.ts';
import { duration, integer, leaf, nonEmptyString, share, showValue, size } from './config-values.ts';
import { HTTP_DEFAULTS } from './http-defaults.ts';
import { DEFAULT_LOG_LEVEL, LOG_LEVELS } from './logger.ts';
import { DEFAULT_PROGRESS_LOG_INTERVAL_MS } from './progress.ts';
import { DEFAULT_MAX_LAG_MS } from './readiness.ts';
import { DEFAULT_SCHEDULE, parseSchedule, type Schedule } from './schedule.ts';
import { LOG_FORMATS } from './terminal.ts';

// ---------------------------------------------------------------------------------------------
// Leaves: the modules' rules, read from what YAML or a variable holds.

// A value is shown without its credentials (displayBaseUrl).
const baseUrl = leaf(
  (value) => {
    const checked = checkBaseUrl(value);
    return `${typeof value === 'string' ? JSON.stringify(displayBaseUrl(value)) : showValue(value)} ${'problem' in checked ? checked.problem : 'is not a base URL'}`;
  },
  (value) => {
    const checked = checkBaseUrl(value);
    return 'url' in checked ? checked.url : undefined;
  },
);

const workspaceId = leaf(
  (value) => `${showValue(value)} is not a workspace id (exactly 12 characters of a-z and 0-9)`,
  (value) => {
    const parsed = workspaceIdSchema.safeParse(typeof value === 'string' ? value.trim() : value);
    return parsed.success ? parsed.data : undefined;
  },
);

// Never echoes the value: it is the secret.
const apiKey = leaf(() => `the API key ${API_KEY_RULE} (value not shown)`, checkApiKey);

/** The mirror URL as configured, and where it points (the mirror's own reading of it). */
export interface MirrorUrl {
  url: string;
  location: MirrorLocation;
}

// A value that is no URL is shown with everything after its user part hidden (displayMirrorUrl).
const mirrorUrl = leaf(
  (value) => `${typeof value === 'string' ? JSON.stringify(displayMirrorUrl(value.trim())) : showValue(value)} ${(typeof value === 'string' ? postgresUrlProblem(value.trim()) : undefined)
    ?? 'is not sqlite:PATH or a postgres:// (postgresql://) URL'}`,
  (value): MirrorUrl | undefined => {
    if (typeof value !== 'string') return undefined;
    const url = value.trim();
    try {
      return { url, location: parseMirrorUrl(url) };
    } catch {
      return undefined;
    }
  },
);

const pgSchema = leaf((value) => `${showValue(value)} is not ${PG_SCHEMA_RULE}`, checkPgSchema);

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

const conflictPolicy = leaf(CONFLICT_POLICY_RULE, toConflictPolicy);

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

const logLevel = leaf(
  (value) => `${showValue(value)} is not a log level (${LOG_LEVELS.join(', ')})`,
  (value) => {
    const text = typeof value === 'string' ? value.trim().toLowerCase() : undefined;
    return LOG_LEVELS.find((level) => level === text);
  },
);

const logFormat = leaf(
  (value) => `${showValue(value)} is not a log format (${LOG_FORMATS.join(', ')})`,
  (value) => {
    const text = typeof value === 'string' ? value.trim().toLowerCase() : undefined;
    return LOG_FORMATS.find((format) => format === text);
  },
);

// ---------------------------------------------------------------------------------------------
// The file: one strict object per section.

const SECTION_ERROR = { error: 'must be a mapping of keys to values' };

/**
 * The room `wsmirror status` wants on a SQLite mirror's filesystem at the least: what the -wal
 * may reach between two checkpoints (it is trimmed back to this size, see sqlite/connection.ts).
 */
export const DEFAULT_MIN_FREE_BYTES = 64 * 1024 * 1024;

/** The mirror when none is configured: a SQLite file in the working directory. */
export const DEFAULT_MIRROR_URL = 'sqlite:./wsmirror.db';

export const upstreamSection = z.strictObject(
  {
    baseUrl: baseUrl.optional(),
    apiKey: apiKey.optional(),
    apiKeyFile: nonEmptyString('a file path').optional(),
    workspaceId: workspaceId.optional(),
    timeout: duration({ positive: true }).default(CLIENT_DEFAULTS.timeoutMs),
    retries: integer(CLIENT_LIMITS.maxRetries).default(CLIENT_DEFAULTS.maxRetries),
    concurrency: integer(CLIENT_LIMITS.concurrency).default(CLIENT_DEFAULTS.concurrency),
    maxResponseBytes: size(CLIENT_LIMITS.maxResponseBytes.min).default(CLIENT_DEFAULTS.maxResponseBytes),
  },
  SECTION_ERROR,
);

export const mirrorSection = z.strictObject(
  {
    url: mirrorUrl.default({ url: DEFAULT_MIRROR_URL, location: parseMirrorUrl(DEFAULT_MIRROR_URL) }),
    pgSchema: pgSchema.default(DEFAULT_PG_SCHEMA),
    minFreeSpace: size(0).default(DEFAULT_MIN_FREE_BYTES),
  },
  SECTION_ERROR,
);

export const tablesSection = z.strictObject(
  {
    include: tablePatterns.default(['*']),
    exclude: tablePatterns.default([]),
    conflictPolicy: conflictPolicy.default(SYNC_DEFAULTS.conflictPolicy),
    conflictPolicies: conflictPolicies.default([]),
  },
  SECTION_ERROR,
);

export const syncSection = z.strictObject(
  {
    schedule: schedule.default(DEFAULT_SCHEDULE),
    lookback: duration({ positive: false }).default(SYNC_DEFAULTS.lookbackMs),
    pageSize: integer({ min: 1, max: MAX_PAGE_LIMIT }).default(SYNC_DEFAULTS.pageSize),
    backfillConcurrency: integer(SYNC_LIMITS.backfillConcurrency).default(SYNC_DEFAULTS.backfillConcurrency),
    fullScanEvery: duration({ positive: true }).default(SYNC_DEFAULTS.fullScanEveryMs),
    maxDeleteShare: share.default(SYNC_DEFAULTS.maxDeleteShare),
    maxLag: duration({ positive: true }).default(DEFAULT_MAX_LAG_MS),
    // Unset: derived from upstream.timeout (defaultCreateSettleMs).
    createSettle: duration({ positive: false }).optional(),
  },
  SECTION_ERROR,
);

export const httpSection = z.strictObject(
  {
    host: nonEmptyString('a host name or address').default(HTTP_DEFAULTS.host),
    port: integer({ min: 0, max: 65535 }).default(HTTP_DEFAULTS.port),
  },
  SECTION_ERROR,
);

export const logSection = z.strictObject(
  {
    level: logLevel.default(DEFAULT_LOG_LEVEL),
    format: logFormat.default('auto'),
    progressInterval: duration({ positive: true }).default(DEFAULT_PROGRESS_LOG_INTERVAL_MS),
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
  { error: `must be a mapping of sections (${Object.keys(SECTIONS).join(', ')})` },
);

export type ConfigFile = z.output<typeof configFileSchema>;
