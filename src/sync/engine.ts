import { MirrorLostError } from '../errors.ts';
import type { Catalog } from '../mirror/catalog.ts';
import type { CursorWrites, Mirror, UnmigratedTable } from '../mirror/mirror.ts';
import { foreignTriggerRefusals } from './foreign-trigger-tables.ts';
import { missingRefusals } from './missing-tables.ts';
import type { RefusedTable } from './name-rule.ts';
import { silentLogger, type SyncLogger, type SyncObserver } from './observer.ts';
import { emptyPushReport, pushOutbox, type PushReport } from './push/push-step.ts';
import { upstreamUnusable } from './push/push-failure.ts';
import { errorInfo } from './error-info.ts';
import { pullSchema, type SchemaPullResult } from './schema-pull.ts';
import { tableLabel, type SyncContext } from './sync-context.ts';
import { pullRecords, type TableReport } from './table-pulls.ts';
import { SYNC_DEFAULTS, type SyncOptions } from './sync-options.ts';
import type { Upstream } from './upstream.ts';

export type { TableReport } from './table-pulls.ts';


export interface CycleReport {
  startedAt: Date;
  durationMs: number;
  /** Local edits by what became of them, and why the push stopped when it failed. */
  push: PushReport & { error?: { code: string; message: string } };
  schema: { reread: boolean; operations: string[] };
  tables: TableReport[];
  /** True when every step succeeded: the mirror is current. */
  ok: boolean;
}

export interface SyncEngineDeps {
  client: Upstream;
  mirror: Mirror;
  options?: Partial<SyncOptions>;
  logger?: SyncLogger;
  observer?: SyncObserver;
}

export interface CycleOptions {
  /** Scan tables without history now, whether or not their scan is due (`wsmirror sync`). */
  forceFullScan?: boolean;
  /** Stops the cycle between two mirror transactions (graceful shutdown). */
  signal?: AbortSignal;
  /** When the next cycle will start, given when this one ends (`wsmirror run`); stored for `wsmirror status`. */
  nextRunAt?: (startedAt: Date, finishedAt: Date) => Date | null;
}

/** What went wrong in a cycle, one line each (`push: …`, `crm.deals: …`); empty when it succeeded. */
export function cycleProblems(report: CycleReport): string[] {
  const problems = report.push.error !== undefined ? [`push: ${report.push.error.message}`] : [];
  for (const t of report.tables) if (t.action === 'failed') problems.push(`${t.table}: ${t.error?.message ?? 'failed'}`);
  return problems;
}

/** The tables a catalog migration holds back, reported failed as the schema pull's refusals are. */
function unmigratedRefusals(unmigrated: readonly UnmigratedTable[], catalog: Catalog): RefusedTable[] {
  return unmigrated.flatMap(({ tableId, message }) => {
    const table = catalog.tables.find((t) => t.tableId === tableId);
    return table === undefined ? [] : [{ tableId, table: tableLabel(table), mode: table.mode, code: 'MIRROR', message }];
  });
}


/**
 * One sync cycle (DESIGN §4.1): pull the schema, push local edits, then pull the records of every
 * mirrored table (the schema comes first so each edit goes to its field as upstream has it now;
 * docs/sync.md, "A cycle"). Pure orchestration over the upstream port and the mirror. A push that
 * stops (refused key, mirror error) is reported and the pull still runs (it never overwrites a
 * column with a pending local edit); a failing table does not stop the others; a failing schema
 * pull stops the cycle after the push (records cannot be placed without it). A table whose schema
 * changed upstream while it was read is read again after a second schema pull (table-pulls.ts).
 */
export class SyncEngine {
  readonly #ctx: SyncContext;

  constructor(deps: SyncEngineDeps) {
    this.#ctx = {
      client: deps.client,
      mirror: deps.mirror,
      options: { ...SYNC_DEFAULTS, ...deps.options },
      logger: deps.logger ?? silentLogger,
      observer: deps.observer ?? {},
    };
  }

  /**
   * One cycle. Its outcome is stored in the mirror for `wsmirror status`: per table the last
   * successful pull or the last error, and the cycle's success or failure (also when it throws).
   */
  async runCycle(opts: CycleOptions = {}): Promise<CycleReport> {
    const startedAt = new Date();
    let report: CycleReport;
    let cursors: CursorWrites | undefined;
    try {
      ({ report, cursors } = await this.#cycle(startedAt, opts));
    } catch (error) {
      // A mirror this process lost is not written to, not even to record why.
      if (!opts.signal?.aborted && !(error instanceof MirrorLostError)) {
        await this.#recordCycle(startedAt, [`cycle: ${errorInfo(error).message}`], opts);
      }
      throw error;
    }
    await this.#recordCycle(startedAt, cycleProblems(report), opts, cursors);
    return report;
  }

  /**
   * `cursors`: the cycle's own, stored with its record (an idle schema poll's cursor: lost with a
   * failed write, the same window is polled again).
   */
  async #recordCycle(startedAt: Date, problems: string[], opts: CycleOptions, cursors?: CursorWrites): Promise<void> {
    const finishedAt = new Date();
    const next = opts.nextRunAt?.(startedAt, finishedAt);
    try {
      await this.#ctx.mirror.recordCycle({
        startedAt: startedAt.toISOString(),
        finishedAt: finishedAt.toISOString(),
        problems,
        ...(next === undefined ? {} : { nextRunAt: next === null ? null : next.toISOString() }),
        ...(cursors === undefined ? {} : { cursors }),
      });
    } catch (error) {
      // The mirror itself failing is the cycle's error already; the summary is secondary.
      this.#ctx.logger.warn({ err: errorInfo(error) }, 'could not record the cycle in the mirror');
    }
  }


  async #cycle(startedAt: Date, opts: CycleOptions): Promise<{ report: CycleReport; cursors: CursorWrites | undefined }> {
    const { mirror, logger, observer } = this.#ctx;
    const ctx: SyncContext = opts.signal ? { ...this.#ctx, signal: opts.signal } : this.#ctx;
    // One process syncs a mirror at a time: no cycle without the sync lock (nor into a deleted file).
    await mirror.confirmSyncing();
    // Read once for the push, the schema pull and the table pulls, and again only after a
    // schema pull that applied a plan: an idle cycle costs few round trips to a Postgres server.
    // Each table's pull changes only its own cursors: one read serves every table's first look.
    let catalog = await mirror.readCatalog();
    // Tables a catalog migration held back (a view of a user's own in the way) are tried again
    // first: once the user dropped the view, this cycle syncs them.
    let unmigrated: UnmigratedTable[] = [];
    if (catalog.unmigrated.length > 0) {
      unmigrated = await mirror.finishMigration();
      catalog = await mirror.readCatalog();
    }
    // A right on the outbox (or TRIGGER on a table) granted to another role since the open is
    // taken back before the push; the outbox takes no row from such a role meanwhile.
    if (catalog.extraGrants) for (const warning of await mirror.revokeExtraGrants()) logger.warn({}, warning);
    let cursors = await mirror.readCursors();
    // Upstream's schema is applied before the push, so the push sends each waiting edit to its
    // field as upstream has it now: an edit follows a rename, and one whose field was deleted
    // (even if made again under its name) fails instead of landing in another field. A schema
    // pull that fails does not hold the push back (unless upstream is unusable, below); its
    // error ends the cycle after it.
    let pulled: SchemaPullResult | undefined;
    let schemaFailure: { error: unknown } | undefined;
    // Tables whose SQL table is missing, or that carry a trigger of another role, are held the
    // same way, and reported with what to do (once each: the first reason found).
    const heldBack: RefusedTable[] = [];
    for (const held of [...unmigratedRefusals(unmigrated, catalog), ...missingRefusals(catalog), ...foreignTriggerRefusals(catalog)]) {
      if (!heldBack.some((h) => h.tableId === held.tableId)) heldBack.push(held);
    }
    try {
      pulled = await pullSchema(ctx, cursors, heldBack);
    } catch (error) {
      if (opts.signal?.aborted) throw error;
      schemaFailure = { error };
    }
    if (pulled?.reread) {
      catalog = await mirror.readCatalog();
      cursors = await mirror.readCursors();
    }
    // An upstream the schema pull could not use (down, failing, refusing the key) would fail the
    // push too, charging its first edits an attempt and pushing their next try further off at
    // each cycle of an outage: the cycle ends with the schema's error, the outbox reported.
    if (schemaFailure !== undefined && upstreamUnusable(schemaFailure.error)) {
      await this.#reportOutbox(ctx);
      throw schemaFailure.error;
    }
    // Again before the push, which would send local inserts a second process may send too.
    await mirror.confirmSyncing();
    const push = await this.#push(ctx, catalog);
    if (schemaFailure !== undefined) throw schemaFailure.error;
    if (observer.tablesMirrored) {
      // The catalog holds each table's last pull: no read of the sync state for it.
      observer.tablesMirrored(catalog.tables.map((t) => ({
        table: tableLabel(t), mode: t.mode,
        currentAsOf: t.currentAsOf === null ? null : new Date(t.currentAsOf), lastPullAt: t.lastPullAt === null ? null : new Date(t.lastPullAt),
      })));
    }
    const { tables, schema, schemaCursors } = await pullRecords(ctx, opts, { catalog, cursors, pulled: pulled!, heldBack });

    const ok = push.error === undefined && tables.every((t) => t.action !== 'failed');
    return { report: { startedAt, durationMs: Date.now() - startedAt.getTime(), push, schema, tables, ok }, cursors: schemaCursors };
  }


  /**
   * The push, with the outbox reported before it and again after it when it changed anything or
   * failed: a push that runs long (a large outbox, an upstream failing slowly) leaves the outbox
   * metrics as they were when it began, not as the last cycle left them; an idle cycle reads
   * the outbox once.
   */
  async #push(ctx: SyncContext, catalog: Catalog): Promise<CycleReport['push']> {
    const { logger } = ctx;
    await this.#reportOutbox(ctx);
    const result: CycleReport['push'] = emptyPushReport();
    try {
      await pushOutbox(ctx, catalog, result);
    } catch (error) {
      if (ctx.signal?.aborted) throw error;
      const info = errorInfo(error);
      logger.error({ err: info }, 'push failed');
      // What it did before it stopped stays counted.
      result.error = info;
    }
    if (result.error !== undefined || Object.values(result).some((count) => typeof count === 'number' && count > 0)) await this.#reportOutbox(ctx);
    return result;
  }

  /** Outbox entries by status, the oldest pending one and those waiting, to the observer (metrics). */
  async #reportOutbox({ mirror, observer }: SyncContext): Promise<void> {
    if (!observer.outboxChecked) return;
    const counts = { pending: 0, failed: 0, conflict: 0 };
    for (const entry of await mirror.outboxSummary()) counts[entry.status] += entry.count;
    // Nothing pending, nothing to date or wait for: fewer statements on an idle cycle.
    if (counts.pending === 0) {
      observer.outboxChecked(counts, null, 0);
    } else {
      const waiting = (await mirror.waitingEdits()).reduce((n, w) => n + w.entries, 0);
      observer.outboxChecked(counts, await mirror.oldestPendingAt(), waiting);
    }
  }
}
