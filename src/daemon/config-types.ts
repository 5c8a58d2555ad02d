/**
 * The typed, validated configuration the daemon runs on. `load-config.ts` builds it from the
 * YAML file and the environment; `config-schema.ts` is the file's schema.
 */
import type { ConflictPolicy, ConflictPolicyRule } from '../sync/push/conflict-policy.ts';
import type { LogLevel } from './logger.ts';
import type { Schedule } from './schedule.ts';
import type { LogFormat } from './terminal.ts';

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

/**
 * Where a setting's value came from, for messages: an environment variable, the configuration
 * file (`configFile`: its absolute path; null for a configuration given as an object, named by
 * `label`), or its default.
 */
export type SettingSource = { readonly variable: string } | { readonly label: string; readonly configFile: string | null } | 'default';

interface MirrorCommon {
  /** The URL as configured (for Postgres it may hold a password: log `redactConfig()` instead). */
  readonly url: string;
  /** Where `url` was set. */
  readonly urlSource: SettingSource;
  /** Postgres schema holding the mirror (kept for SQLite too, where it is unused). */
  readonly pgSchema: string;
  /** SQLite: the free space below which `wsmirror status` lists the mirror's filesystem (unused on Postgres). */
  readonly minFreeBytes: number;
}
export type MirrorConfig =
  | (MirrorCommon & {
    readonly dialect: 'sqlite';
    /** absolute path, or `:memory:` */
    readonly path: string;
    /** The working directory a relative path in `url` was resolved against; null for an absolute one. */
    readonly relativeTo: string | null;
  })
  | (MirrorCommon & { readonly dialect: 'postgres' });

export interface TablesConfig {
  /** `module.table` glob patterns (`*`, `?`); a table is mirrored when it matches one of these… */
  readonly include: readonly string[];
  /** …and none of these. */
  readonly exclude: readonly string[];
  /** Where each list was set (settingSourceName: a variable, a file's path, or `default`). */
  readonly sources: { readonly include: string; readonly exclude: string };
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
  /** List pages in flight while one table is backfilled or scanned (tables go one after another). */
  readonly backfillConcurrency: number;
  /** How often a table without history is fully scanned and diffed. */
  readonly fullScanEveryMs: number;
  /** A full-scan diff deleting more than this share of a table stops instead (0 to 1). */
  readonly maxDeleteShare: number;
  /** `/readyz` fails when a table lags upstream by more than this. */
  readonly maxLagMs: number;
  /** How old an unanswered create's send must be before it is looked up upstream (SyncOptions.createSettleMs). */
  readonly createSettleMs: number;
}

export interface HttpConfig {
  readonly host: string;
  /** Port of `/healthz`, `/readyz`, `/metrics`; 0 = no HTTP server. */
  readonly port: number;
}

export interface LogConfig {
  readonly level: LogLevel;
  /** `auto`: readable lines and progress bars on a terminal, JSON lines elsewhere. */
  readonly format: LogFormat;
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
