import { MirrorLostError, TableSchemaMovedError } from '../errors.ts';
import { fieldsOf, type Catalog, type MirrorTable } from '../mirror/catalog.ts';
import type { CursorWrites, Mirror, UnmigratedTable } from '../mirror/mirror.ts';
import { missingRefusals } from './missing-tables.ts';
import type { RefusedTable } from './name-rule.ts';
import { silentLogger, type SyncLogger, type SyncObserver } from './observer.ts';
import { pullTable, type TableAction } from './record-pull.ts';
import { pushOutbox, type PushReport } from './push/push-step.ts';
import { pullSchema, type SchemaPullResult } from './schema-pull.ts';
import { tablesChangedSince, undoPull, type SchemaPollWindow } from './schema-recheck.ts';
import { pulledTable, tableLabel, type SyncContext } from './sync-context.ts';
import { SYNC_DEFAULTS, type SyncOptions } from './sync-options.ts';
import type { Upstream } from './upstream.ts';

export interface TableReport {
  tableId: string;
  /** `module.table` */
  table: string;
  mode: 'history' | 'fullscan';
  /**
   * `deferred`: upstream's schema changed while the table was read, and again while it was read
   * once more after the schema was pulled again; the next cycle reads it. No failure.
   */
  action: TableAction | 'failed' | 'deferred';
  upserted: number;
  deleted: number;
  error?: { code: string; message: string };
}

export interface CycleReport {
  startedAt: Date;
  durationMs: number;
  /** Local edits by what became of them, or why the push stopped. */
  push: PushReport | { error: { code: string; message: string } };
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
  const problems = 'error' in report.push ? [`push: ${report.push.error.message}`] : [];
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

function errorInfo(error: unknown): { code: string; message: string } {
  const code = typeof (error as { code?: unknown })?.code === 'string' ? (error as { code: string }).code : 'ERROR';
  return { code, message: error instanceof Error ? error.message : String(error) };
}

/**
 * One sync cycle (DESIGN §4.1): pull the schema, push local edits, then pull the records of every
 * mirrored table (the schema comes first so each edit goes to its field as upstream has it now;
 * docs/sync.md, "A cycle"). Pure orchestration over the upstream port and the mirror. A push that
 * stops (refused key, mirror error) is reported and the pull still runs (it never overwrites a
 * column with a pending local edit); a failing table does not stop the others; a failing schema
 * pull stops the cycle after the push (records cannot be placed without it). A table whose schema
 * changed upstream while it was read is read again after a second schema pull (schema-drift.ts).
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

  async #recordTableError(tableId: string, error: { code: string; message: string }): Promise<void> {
    try {
      await this.#ctx.mirror.setTableState(tableId, { lastError: { ...error, at: new Date().toISOString() } });
    } catch (writeError) {
      this.#ctx.logger.warn({ tableId, err: errorInfo(writeError) }, 'could not record the table error in the mirror');
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
    let cursors = await mirror.readCursors();
    // Upstream's schema is applied before the push, so the push sends each waiting edit to its
    // field as upstream has it now: an edit follows a rename, and one whose field was deleted
    // (even if made again under its name) fails instead of landing in another field. A schema
    // pull that fails does not hold the push back; its error ends the cycle after it.
    let pulled: SchemaPullResult | undefined;
    let schemaFailure: { error: unknown } | undefined;
    // Tables whose SQL table is missing are held the same way, and reported with what to do.
    const heldBack = [...unmigratedRefusals(unmigrated, catalog), ...missingRefusals(catalog)];
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
    // Again before the push, which would send local inserts a second process may send too.
    await mirror.confirmSyncing();
    const push = await this.#push(ctx, catalog);
    if (schemaFailure !== undefined) throw schemaFailure.error;
    let { cursors: schemaCursors, window, ...schema } = pulled!;
    if (observer.tablesMirrored) {
      const asOf = new Map((await mirror.readSyncState()).tables.map((t) => [t.tableId, t.currentAsOf]));
      observer.tablesMirrored(catalog.tables.map((t) => {
        const at = asOf.get(t.tableId);
        return { table: tableLabel(t), mode: t.mode, currentAsOf: at ? new Date(at) : null, lastPullAt: t.lastPullAt === null ? null : new Date(t.lastPullAt) };
      }));
    }
    const tables: TableReport[] = [];
    await this.#reportRefused(schema.refused, catalog, tables);
    const held = new Set(schema.refused.map((r) => r.tableId));
    const first = catalog.tables.filter((t) => !held.has(t.tableId));
    const moved = await this.#pullTables(ctx, catalog, first, cursors, opts, tables);
    // Pulls that read across a schema change keeping the records' keys (schema-recheck.ts).
    moved.push(...await this.#readAcross(ctx, window, catalog, first, cursors, tables));
    if (moved.length > 0) {
      // Their pulls ended where upstream's schema changed under them, with nothing wrong written
      // (schema-drift.ts): the schema is pulled again, and they are read again under it.
      let again: SchemaPullResult | undefined;
      try {
        again = await pullSchema(ctx, cursors, heldBack);
      } catch (error) {
        if (opts.signal?.aborted) throw error;
        for (const { table } of moved) await this.#tableFailed(table, error, tables);
      }
      if (again) {
        // Later than the first poll's: stored with its plan, or to be stored with the cycle.
        schemaCursors = again.cursors;
        schema = { ...schema, reread: schema.reread || again.reread, operations: [...schema.operations, ...again.operations] };
        if (again.reread) {
          catalog = await mirror.readCatalog();
          cursors = await mirror.readCursors();
        }
        const movedIds = new Set(moved.map((m) => m.table.tableId));
        const refused = again.refused.filter((r) => movedIds.has(r.tableId));
        await this.#reportRefused(refused, catalog, tables);
        const refusedIds = new Set(refused.map((r) => r.tableId));
        // A table the schema pull dropped is no longer mirrored, nor reported.
        const retry = catalog.tables.filter((t) => movedIds.has(t.tableId) && !refusedIds.has(t.tableId));
        // They were due: a scan that finished this cycle, undone, is made again.
        const movedAgain = await this.#pullTables(ctx, catalog, retry, cursors, { ...opts, forceFullScan: true }, tables);
        movedAgain.push(...await this.#readAcross(ctx, again.window, catalog, retry, cursors, tables));
        for (const { table, error } of movedAgain) {
          // Upstream's schema changed again while the table was read: it waits for the next
          // cycle's schema pull, its rows and cursors as the pull left them. No error: nothing is wrong.
          logger.warn({ table: tableLabel(table), reason: error.message }, 'the table\'s schema changed upstream again while it was read; it is read at the next cycle');
          tables.push({ tableId: table.tableId, table: tableLabel(table), mode: table.mode, action: 'deferred', upserted: 0, deleted: 0 });
        }
      }
    }
    const ok = !('error' in push) && tables.every((t) => t.action !== 'failed');
    return { report: { startedAt, durationMs: Date.now() - startedAt.getTime(), push, schema, tables, ok }, cursors: schemaCursors };
  }

  /**
   * The tables among `pulling` whose pull this cycle read across a change of their schema that the
   * schema poll of `window` did not see: their pulls are undone (cursors and state back to `catalog`
   * and `cursors`, as the pull began) and their reports taken back, for the caller to pull the
   * schema again and read them again. When the change log cannot be read, no pull can be trusted:
   * each is undone and reported failed.
   */
  async #readAcross(
    ctx: SyncContext, window: SchemaPollWindow, catalog: Catalog, pulling: readonly MirrorTable[],
    cursors: ReadonlyMap<string, string>, tables: TableReport[],
  ): Promise<{ table: MirrorTable; error: TableSchemaMovedError }[]> {
    // A pull that wrote no row wrote none under a wrong field list (a delete goes by id): an idle cycle asks nothing more.
    const wrote = new Set(tables.filter((t) => t.upserted > 0).map((t) => t.tableId));
    const pulled = pulling.filter((t) => wrote.has(t.tableId));
    if (pulled.length === 0) return [];
    let changed: Set<string>;
    let failure: { error: unknown } | undefined;
    try {
      changed = await tablesChangedSince(ctx, window, catalog, pulled);
    } catch (error) {
      if (ctx.signal?.aborted) throw error;
      changed = new Set(pulled.map((t) => t.tableId));
      failure = { error };
    }
    const moved: { table: MirrorTable; error: TableSchemaMovedError }[] = [];
    for (const table of pulled.filter((t) => changed.has(t.tableId))) {
      await undoPull(ctx, table, cursors);
      tables.splice(tables.findIndex((t) => t.tableId === table.tableId), 1);
      if (failure) {
        await this.#tableFailed(table, failure.error, tables);
        continue;
      }
      const error = new TableSchemaMovedError(`${tableLabel(table)}: its schema changed upstream while its records were read`);
      ctx.logger.info({ table: tableLabel(table), reason: error.message }, 'the table\'s schema changed upstream during its pull; pulling the schema again');
      moved.push({ table, error });
    }
    return moved;
  }

  /** Reports the tables a schema pull refused, failed, with the reason recorded on those mirrored. */
  async #reportRefused(refused: readonly RefusedTable[], catalog: Catalog, tables: TableReport[]): Promise<void> {
    const mirrored = new Set(catalog.tables.map((t) => t.tableId));
    for (const r of refused) {
      const error = { code: r.code, message: r.message };
      this.#ctx.logger.error({ table: r.table, err: error }, 'table refused');
      // A table never mirrored has no row to record it on: the report and the log say it.
      if (mirrored.has(r.tableId)) await this.#recordTableError(r.tableId, error);
      tables.push({ tableId: r.tableId, table: r.table, mode: r.mode, action: 'failed', upserted: 0, deleted: 0, error });
    }
  }

  async #tableFailed(table: MirrorTable, error: unknown, tables: TableReport[]): Promise<void> {
    const info = errorInfo(error);
    this.#ctx.logger.error({ table: tableLabel(table), err: info }, 'table pull failed');
    await this.#recordTableError(table.tableId, info);
    tables.push({ tableId: table.tableId, table: tableLabel(table), mode: table.mode, action: 'failed', upserted: 0, deleted: 0, error: info });
  }

  /**
   * Pulls the records of `pulling`, one table after the other, reporting each in `tables`. A table
   * that fails is reported and the others go on; one whose schema changed upstream during its pull
   * is returned instead, for the caller to pull the schema again.
   */
  async #pullTables(
    ctx: SyncContext, catalog: Catalog, pulling: readonly MirrorTable[], cursors: ReadonlyMap<string, string>,
    opts: CycleOptions, tables: TableReport[],
  ): Promise<{ table: MirrorTable; error: TableSchemaMovedError }[]> {
    const { logger, observer } = ctx;
    const moved: { table: MirrorTable; error: TableSchemaMovedError }[] = [];
    for (const table of pulling) {
      const name = tableLabel(table);
      opts.signal?.throwIfAborted();
      logger.debug({ table: name, mode: table.mode, state: table.state }, 'pulling table');
      try {
        const pulled = pulledTable(table, fieldsOf(catalog, table.tableId));
        // The pull's last write records it (last pull, the state held, no error) with its rows.
        const { currentAsOf, ...result } = await pullTable(ctx, pulled, { forceFullScan: opts.forceFullScan ?? false, now: Date.now(), cursors });
        if (currentAsOf) observer.tablePulled?.(name, currentAsOf);
        tables.push({ tableId: table.tableId, table: name, mode: table.mode, ...result });
        observer.tableFinished?.(name);
        if (result.upserted + result.deleted > 0) {
          logger.info({ table: name, action: result.action, upserted: result.upserted, deleted: result.deleted }, 'table pulled');
        }
      } catch (error) {
        if (opts.signal?.aborted) throw error;
        if (error instanceof TableSchemaMovedError) {
          logger.info({ table: name, reason: error.message }, 'the table\'s schema changed upstream during its pull; pulling the schema again');
          moved.push({ table, error });
          continue;
        }
        await this.#tableFailed(table, error, tables);
      }
    }
    return moved;
  }

  async #push(ctx: SyncContext, catalog: Catalog): Promise<CycleReport['push']> {
    const { mirror, logger, observer } = ctx;
    let result: CycleReport['push'];
    try {
      result = await pushOutbox(ctx, catalog);
    } catch (error) {
      if (ctx.signal?.aborted) throw error;
      const info = errorInfo(error);
      logger.error({ err: info }, 'push failed');
      result = { error: info };
    }
    if (observer.outboxChecked) {
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
    return result;
  }
}
