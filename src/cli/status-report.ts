import type { CycleSummary, Mirror, OutboxStatus, TableError, TableMode, TableState } from '../mirror/index.ts';
import type { FilesystemRoom } from '../mirror/filesystem-room.ts';
import { formatSize } from '../daemon/units.ts';
import { missingTableReason, scanCursorKey, tableLabel } from '../mirror/index.ts';
import { decodeCheckpoint, decodeRefusals, lagBoundMs, lastPullMs, REFUSED_CURSOR_KEY, tableLagMs, type StoredRefusal } from '../sync/index.ts';

/** Outbox entries by status; `waiting`: those of the pending that wait for a row inserted here to be created upstream. */
export type OutboxCounts = Record<OutboxStatus, number> & { waiting: number };

/**
 * What a table is doing, for people and monitoring:
 * - `backfilling`: every record is being read (new, retyped or resynced table), see `progress`;
 *   also a table never pulled to a current state yet (its first sync interrupted, even after its
 *   records were read, before the catch-up poll that makes them current);
 * - `ready`: pulled incrementally (history) or by periodic full scans;
 * - `blocked`: a safety valve stopped its pull (a full scan's deletes over `sync.maxDeleteShare`, or a
 *   drop upstream contradicts); nothing was deleted or dropped;
 * - `failing`: its last pull failed (see `lastError`); it is retried every cycle. Also a table
 *   whose SQL table is missing (`missing`), or that carries a trigger of another role
 *   (`foreignTrigger`), from the moment it is, before a cycle meets it.
 */
export type TableCondition = 'backfilling' | 'ready' | 'blocked' | 'failing';

/** One mirrored table in the report. The JSON form is a contract for scripts: add, never rename. */
export interface TableStatus {
  /** `module.table` */
  table: string;
  module: string;
  name: string;
  tableId: string;
  /** Null for a table refused before its SQL table was made (see `lastError`). */
  sqlName: string | null;
  mode: TableMode;
  /** The catalog's state: `needs_backfill` until a backfill completes. */
  state: TableState;
  status: TableCondition;
  /** Null when the SQL table cannot be counted (see `error`). */
  rows: number | null;
  /**
   * The SQL table is missing from the mirror (dropped outside wsmirror): the table is neither
   * pulled nor pushed until `wsmirror resync` makes it again; `error` says so.
   */
  missing: boolean;
  /**
   * The table carries a trigger wsmirror did not make (Postgres): it is neither pulled nor pushed
   * until the trigger is dropped; `error` names it and gives the `DROP TRIGGER` to run.
   */
  foreignTrigger: boolean;
  /** End of the last successful record pull, ISO 8601; null before the first one. */
  lastPullAt: string | null;
  /** Start of the last successful record pull: the upstream state the table holds. */
  currentAsOf: string | null;
  /** `checkedAt` − `currentAsOf` in milliseconds (sync/table-lag.ts, as in /metrics); null before the first pull. */
  lagMs: number | null;
  /** The lag beyond which the table needs attention (`sync.maxLag`, plus `sync.fullScanEvery` for full-scan tables). */
  lagBoundMs: number;
  /** A backfill or full scan under way (or interrupted, to be resumed); null when none is. */
  progress: { rowsRead: number; estimatedRows: number | null; percent: number | null; startedAt: string } | null;
  /** Why the last pull failed, and when; null once one succeeded. */
  lastError: TableError | null;
  /** Null when this role may not read the outbox (see `StatusReport.outboxUnreadable`). */
  outbox: OutboxCounts | null;
  error?: string;
}

export interface StatusReport {
  /** The mirror URL, password masked. */
  mirror: string;
  /** The Postgres schema holding the mirror; null on SQLite. */
  schema: string | null;
  checkedAt: string;
  tables: TableStatus[];
  /** Every outbox entry, including those of tables no longer mirrored; null when this role may not read the outbox. */
  outbox: OutboxCounts | null;
  /**
   * Why the outbox could not be counted (Postgres: the role has no SELECT on `_wsmirror_outbox`,
   * as the read-only role of docs/querying.md), naming the GRANT that would show it; null when it
   * was. Not a matter of the mirror's health: it needs no attention.
   */
  outboxUnreadable: string | null;
  /** When the oldest pending local edit was made (ISO 8601), null when none is pending. */
  oldestPendingAt: string | null;
  /** `checkedAt` − `oldestPendingAt` in milliseconds; null when none is pending. */
  oldestPendingAgeMs: number | null;
  /** The last cycles, as the daemon (`run`, `sync`, `resync`) recorded them. */
  cycle: CycleSummary;
  /**
   * SQLite: the room on the filesystem holding the mirror file and its -wal, and the free space
   * below which it needs attention (`minFreeBytes`: `mirror.minFreeSpace`, or a tenth of the
   * mirror's size if that is more); null on Postgres.
   */
  filesystem: (FilesystemRoom & { minFreeBytes: number }) | null;
  /**
   * The wsmirror process holding the mirror's sync lock when `status` ran (`wsmirror run` holds it
   * while it is up, `sync` while it runs), so that a first backfill is under way, not interrupted
   * (`heldBy`: which, when it can be told); null when none did.
   */
  syncProcess: { heldBy: string | null } | null;
  /** What needs attention, one line each; empty when nothing does (exit code 0). */
  attention: string[];
}

export interface StatusOptions {
  pgSchema?: string;
  /** `mirror.minFreeSpace`: see `StatusReport.filesystem`. */
  minFreeBytes: number;
  now?: Date;
  bounds: { maxLagMs: number; fullScanEveryMs: number };
}

function noEntries(): OutboxCounts {
  return { pending: 0, failed: 0, conflict: 0, waiting: 0 };
}

function conditionOf(state: TableState, lastError: TableError | null, held: boolean, neverPulled: boolean): TableCondition {
  if (held) return 'failing';
  if (lastError?.code === 'SAFETY_VALVE') return 'blocked';
  if (lastError) return 'failing';
  return state === 'needs_backfill' || neverPulled ? 'backfilling' : 'ready';
}

/** Never pulled to a current state: no pull has ended (a backfill that read every record is not one before its catch-up poll). */
function neverPulled(t: Pick<TableStatus, 'lastPullAt' | 'currentAsOf'>): boolean {
  return t.lastPullAt === null && t.currentAsOf === null;
}

function iso(text: string | null): string | null {
  const ms = text === null ? NaN : Date.parse(text);
  return Number.isNaN(ms) ? null : new Date(ms).toISOString();
}

/** Reads the report from the mirror alone (no upstream call). */
export async function collectStatus(mirror: Mirror, options: StatusOptions): Promise<StatusReport> {
  const now = options.now ?? new Date();
  const catalog = await mirror.readCatalog();
  const sync = await mirror.readSyncState();
  const syncOf = new Map(sync.tables.map((t) => [t.tableId, t]));
  const outboxUnreadable = await mirror.outboxUnreadable();
  const readable = outboxUnreadable === null;
  const summary = readable ? await mirror.outboxSummary() : [];
  const outbox = noEntries();
  const perTable = new Map<string, OutboxCounts>();
  const countsOf = (tableId: string) => {
    let counts = perTable.get(tableId);
    if (counts === undefined) perTable.set(tableId, counts = noEntries());
    return counts;
  };
  for (const entry of summary) {
    outbox[entry.status] += entry.count;
    countsOf(entry.tableId)[entry.status] += entry.count;
  }
  for (const wait of !readable || outbox.pending === 0 ? [] : await mirror.waitingEdits()) {
    outbox.waiting += wait.entries;
    countsOf(wait.tableId).waiting += wait.entries;
  }
  const tables: TableStatus[] = [];
  const missing = new Set(catalog.missing);
  const triggers = new Map(catalog.foreignTriggers.map((f) => [f.tableId, f.message]));
  for (const t of catalog.tables) {
    let rows: number | null = null;
    let error: string | undefined;
    const isMissing = missing.has(t.tableId);
    const trigger = triggers.get(t.tableId);
    // A SQL table dropped by hand is known from the catalog read: what to do, not the database's error.
    if (isMissing) {
      error = missingTableReason(t);
    } else {
      // So is a trigger of another role's, which holds the table back (its rows are there).
      if (trigger !== undefined) error = trigger;
      try {
        rows = await mirror.countRows(t.tableId);
      } catch (e) {
        // A SQL table damaged by hand: report it, keep going with the others.
        error = `${error === undefined ? '' : `${error}; `}cannot count the rows of ${t.sqlName}: ${e instanceof Error ? e.message : String(e)}`;
      }
    }
    const state = syncOf.get(t.tableId);
    const currentAsOf = iso(state?.currentAsOf ?? null);
    const lastError = state?.lastError ?? null;
    const checkpoint = decodeCheckpoint(await mirror.getCursor(scanCursorKey(t.tableId)));
    const percent = checkpoint?.estimatedRows ? Math.min(99, Math.floor((100 * checkpoint.rowsRead) / checkpoint.estimatedRows)) : null;
    tables.push({
      table: tableLabel(t),
      module: t.moduleName,
      name: t.tableName,
      tableId: t.tableId,
      sqlName: t.sqlName,
      mode: t.mode,
      state: t.state,
      status: conditionOf(t.state, lastError, isMissing || trigger !== undefined, neverPulled({ lastPullAt: t.lastPullAt, currentAsOf })),
      rows,
      missing: isMissing,
      foreignTrigger: trigger !== undefined,
      lastPullAt: iso(t.lastPullAt),
      currentAsOf,
      lagMs: tableLagMs(currentAsOf, now.getTime()),
      lagBoundMs: lagBoundMs(t.mode, options.bounds, lastPullMs(currentAsOf, t.lastPullAt)),
      progress: checkpoint
        ? { rowsRead: checkpoint.rowsRead, estimatedRows: checkpoint.estimatedRows, percent, startedAt: checkpoint.startedAt }
        : null,
      lastError,
      outbox: readable ? perTable.get(t.tableId) ?? noEntries() : null,
      ...(error === undefined ? {} : { error }),
    });
  }
  // A table refused before it was made has no catalog row: only the schema pull's list knows it.
  const mirrored = new Set(catalog.tables.map((t) => t.tableId));
  for (const r of decodeRefusals(await mirror.getCursor(REFUSED_CURSOR_KEY))) {
    if (!mirrored.has(r.tableId)) tables.push(refusedStatus(r, readable ? perTable.get(r.tableId) ?? noEntries() : null, sync.cycle.lastFailureAt ?? now.toISOString(), options));
  }
  tables.sort((a, b) => (a.table < b.table ? -1 : a.table > b.table ? 1 : 0));
  const schema = mirror.dialect === 'postgres' ? (options.pgSchema ?? 'public') : null;
  const oldestPendingAt = readable ? iso(await mirror.oldestPendingAt()) : null;
  const room = mirror.filesystemRoom();
  const holder = await mirror.syncLockHolder();
  const report: StatusReport = {
    mirror: mirror.displayUrl, schema, checkedAt: now.toISOString(), tables, outbox: readable ? outbox : null, outboxUnreadable,
    oldestPendingAt,
    oldestPendingAgeMs: oldestPendingAt === null ? null : Math.max(0, now.getTime() - Date.parse(oldestPendingAt)),
    cycle: sync.cycle,
    filesystem: room === null ? null : { ...room, minFreeBytes: Math.max(options.minFreeBytes, Math.ceil(room.mirrorBytes / MIRROR_SHARE_KEPT_FREE)) },
    syncProcess: holder === null ? null : { heldBy: holder.heldBy ?? null },
    attention: [],
  };
  // SQLite: a file or directory other users may write lets them write the outbox.
  report.attention = [...attentionOf(report), ...mirror.sharedWriteAccess()];
  return report;
}

/**
 * A refused table that has no SQL table: failing (or blocked) with the refusal as its last error,
 * at the time of the cycle that refused it. A list stored by an earlier version says neither the
 * time, for which the last failed cycle stands (every cycle that refuses a table fails), nor the
 * module and table apart, read from `module.table` at its first dot.
 */
function refusedStatus(r: StoredRefusal, outbox: OutboxCounts | null, lastFailureAt: string, options: StatusOptions): TableStatus {
  const dot = r.table.indexOf('.');
  const lastError: TableError = { code: r.code, message: r.message, at: r.at ?? lastFailureAt };
  return {
    table: r.table,
    module: r.module ?? r.table.slice(0, dot),
    name: r.name ?? r.table.slice(dot + 1),
    tableId: r.tableId,
    sqlName: null,
    mode: r.mode,
    state: 'needs_backfill',
    status: conditionOf('needs_backfill', lastError, false, true),
    rows: null,
    missing: false,
    foreignTrigger: false,
    lastPullAt: null,
    currentAsOf: null,
    lagMs: null,
    lagBoundMs: lagBoundMs(r.mode, options.bounds),
    progress: null,
    lastError,
    outbox,
  };
}

const RUN_A_SYNC = 'run wsmirror sync, or start the daemon (wsmirror run), and let a cycle complete';

/** What an operator must look at; `wsmirror status` exits 1 when there is anything. */
function attentionOf(report: StatusReport): string[] {
  const out: string[] = [];
  for (const t of report.tables) {
    // Whatever its last pull met, what to do now is to make the SQL table again, or drop the trigger.
    if (t.missing || t.foreignTrigger) {
      out.push(`${t.table}: ${t.error}`);
      continue;
    }
    if (t.status === 'blocked') out.push(`${t.table} is blocked by a safety valve: ${t.lastError!.message}`);
    else if (t.status === 'failing') out.push(`${t.table} is failing since ${t.lastError!.at}: ${t.lastError!.message}`);
    else if (t.lagMs !== null && t.lagMs > t.lagBoundMs) out.push(`${t.table} lags upstream by more than ${Math.round(t.lagBoundMs / 1000)} s`);
    // While a process syncs, its backfill is under way; with none, it was interrupted and waits.
    else if (neverPulled(t) && report.syncProcess === null) out.push(`${t.table} has never been pulled to a current state (a sync stopped before it was): ${RUN_A_SYNC}`);
    if (t.error !== undefined) out.push(`${t.table}: ${t.error}`);
  }
  const { lastFailureAt, lastSuccessAt, lastFailure } = report.cycle;
  if (lastFailureAt !== null && (lastSuccessAt === null || lastFailureAt > lastSuccessAt)) {
    out.push(`the last cycle failed at ${lastFailureAt}: ${(lastFailure ?? '').split('\n').join('; ')}`);
  } else if (lastSuccessAt === null && report.syncProcess === null) {
    out.push(`no cycle has completed yet (no sync has run to its end): ${RUN_A_SYNC}`);
  }
  const { failed, conflict } = report.outbox ?? noEntries();
  if (failed + conflict > 0) out.push(`${failed} failed and ${conflict} conflicting local edits wait in the outbox (wsmirror outbox)`);
  const fs = report.filesystem;
  if (fs !== null && fs.freeBytes < fs.minFreeBytes) out.push(filesystemFilling(fs));
  return out;
}

/**
 * Free space kept for the writes of one large change, as a share of the mirror (1/10): a column
 * dropped or retyped upstream makes SQLite rewrite its whole table, through the -wal, and a
 * backfill or resync writes a table again before the -wal is folded back into the file.
 */
const MIRROR_SHARE_KEPT_FREE = 10;

/**
 * A full disk fails every write, the record of the failed cycle included: the cycles' summary in
 * the mirror then says nothing, and the filesystem itself has to.
 */
function filesystemFilling(fs: NonNullable<StatusReport['filesystem']>): string {
  const share = Math.ceil(fs.mirrorBytes / MIRROR_SHARE_KEPT_FREE);
  const bound = share > 0 && fs.minFreeBytes === share
    ? `a tenth of the mirror's ${formatSize(fs.mirrorBytes)}` : `${formatSize(fs.minFreeBytes)} (mirror.minFreeSpace)`;
  return `the filesystem of ${fs.path} (the SQLite mirror and its -wal) has ${formatSize(fs.freeBytes)} free of ${formatSize(fs.totalBytes)}, `
    + `less than ${bound}: writes to the mirror may fail with "database or disk is full", and so may the record of a failed cycle `
    + '(the log and /readyz still say it); make room there, or move the mirror (mirror.url) to a larger filesystem while wsmirror is stopped';
}
