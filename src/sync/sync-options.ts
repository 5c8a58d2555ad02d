import { CLIENT_DEFAULTS } from '../client/index.ts';
import type { TableFilter } from '../mirror/table-filter.ts';
import type { ConflictPolicy, ConflictPolicyRule } from './push/conflict-policy.ts';

/** What the engine needs to know from the configuration. */
export interface SyncOptions {
  /** Subtracted from each poll's `asOf` to make the next `since` (late commits, clock skew). */
  lookbackMs: number;
  /** Records per list request (1-100). */
  pageSize: number;
  /** List pages fetched ahead during a backfill or full scan. */
  backfillConcurrency: number;
  /** Rows per mirror transaction while backfilling or scanning; default: the mirror's preference. */
  writeBatchRows: number | undefined;
  /**
   * A batch is also written once its values take about this many bytes: rows of large records
   * would otherwise wait by the hundred for their transaction (sync/row-writer.ts).
   */
  writeBatchBytes: number;
  /** How often tables without history are scanned in full (`run`); `sync` always scans. */
  fullScanEveryMs: number;
  /** A scan that would delete more than this share of a table stops and reports instead. */
  maxDeleteShare: number;
  /** Deleting up to this many rows is always allowed, whatever the share (small tables). */
  deleteShareFloor: number;
  tables: TableFilter;
  /** Conflict policy of tables no rule of `conflictPolicies` names. */
  conflictPolicy: ConflictPolicy;
  /** Per-table conflict policies; the first matching pattern wins. */
  conflictPolicies: readonly ConflictPolicyRule[];
  /** A push request's JSON body stays under this many bytes (the API's limit is 6 MB). */
  pushBatchBytes: number;
  /** Records per push request (a refused batch is split in halves: fewer steps when smaller). */
  pushBatchRecords: number;
  /** Records' edits read from the outbox per push round; default: the mirror's preference. */
  pushRoundRecords: number | undefined;
  /** A table's push requests out at once (the client's `concurrency` still bounds all requests). */
  pushRequestsInFlight: number;
  /** Backoff of edits that failed transiently: first ceiling, doubling up to the maximum. */
  pushRetryBaseMs: number;
  pushRetryMaxMs: number;
  /**
   * How old a create's send with no answer (a timeout, a lost connection, a crash) must be before
   * the push looks for the record it may have made, and sends it again if there is none: until
   * then upstream may still be applying it (docs/sync.md, "Exactly once").
   */
  createSettleMs: number;
}

/** Accepted ranges (inclusive), also the configuration's. */
export const SYNC_LIMITS = {
  backfillConcurrency: { min: 1, max: 64 },
} as const;

/**
 * The settle time of unanswered creates when none is configured: twice the client's timeout,
 * and at least a minute, so that a slow upstream has long finished what it took in.
 */
export function defaultCreateSettleMs(upstreamTimeoutMs: number): number {
  return Math.max(60_000, 2 * upstreamTimeoutMs);
}

/** The defaults, here and only here: the configuration's `sync` and `tables` sections take them from this. */
export const SYNC_DEFAULTS: SyncOptions = {
  lookbackMs: 10_000,
  pageSize: 100,
  backfillConcurrency: 4,
  writeBatchRows: undefined,
  writeBatchBytes: 4 * 1024 * 1024,
  fullScanEveryMs: 10 * 60_000,
  maxDeleteShare: 0.5,
  deleteShareFloor: 100,
  tables: {},
  conflictPolicy: 'local-wins',
  conflictPolicies: [],
  pushBatchBytes: 5 * 1024 * 1024,
  pushBatchRecords: 1000,
  pushRoundRecords: undefined,
  pushRequestsInFlight: 2,
  pushRetryBaseMs: 5_000,
  pushRetryMaxMs: 15 * 60_000,
  createSettleMs: defaultCreateSettleMs(CLIENT_DEFAULTS.timeoutMs),
};
