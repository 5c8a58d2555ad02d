import { TableSchemaMovedError } from '../errors.ts';
import { fieldsOf, type Catalog, type MirrorTable } from '../mirror/catalog.ts';
import type { CursorWrites } from '../mirror/mirror.ts';
import { errorInfo } from './error-info.ts';
import type { RefusedTable } from './name-rule.ts';
import { pullTable, type TableAction } from './record-pull.ts';
import { pullSchema, type SchemaPullResult } from './schema-pull.ts';
import { pullStartOf, tablesChangedSince, undoPull, type PullStart, type SchemaPollWindow } from './schema-recheck.ts';
import { pulledTable, tableLabel, type SyncContext } from './sync-context.ts';

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

export interface TablePullOptions {
  /** Scan tables without history now, whether or not their scan is due. */
  forceFullScan?: boolean;
  signal?: AbortSignal;
}

/** Where the cycle's schema pull left things: the pull's records start from it. */
export interface PulledSchema {
  catalog: Catalog;
  cursors: ReadonlyMap<string, string>;
  pulled: SchemaPullResult;
  /** The tables the cycle holds back, for a second schema pull to hold them too. */
  heldBack: readonly RefusedTable[];
}

export interface RecordPulls {
  tables: TableReport[];
  schema: { reread: boolean; operations: string[] };
  /** The schema cursors to store with the cycle: the second schema pull's, when there was one. */
  schemaCursors: CursorWrites | undefined;
}

type Moved = { table: MirrorTable; error: TableSchemaMovedError };

/**
 * The records step of a cycle: every mirrored table's pull, one after the other, each reported
 * (a failing table does not stop the others). A table whose schema changed upstream while it was
 * read (its records disagreed with its field list, schema-drift.ts, or the change log says so
 * afterwards, schema-recheck.ts) is read again after a second schema pull; one that changes again
 * meanwhile is `deferred` to the next cycle.
 */
export async function pullRecords(ctx: SyncContext, opts: TablePullOptions, start: PulledSchema): Promise<RecordPulls> {
  return new TablePulls(ctx, opts).run(start);
}

class TablePulls {
  readonly #ctx: SyncContext;
  readonly #opts: TablePullOptions;
  readonly #tables: TableReport[] = [];
  /** Each table's state as its last pull of this cycle began: what undoing that pull puts back. */
  readonly #pullStarts = new Map<string, PullStart>();

  constructor(ctx: SyncContext, opts: TablePullOptions) {
    this.#ctx = ctx;
    this.#opts = opts;
  }

  async run({ catalog, cursors, pulled, heldBack }: PulledSchema): Promise<RecordPulls> {
    const ctx = this.#ctx;
    let { cursors: schemaCursors, window, ...schema } = pulled;
    const tables = this.#tables;
    await this.#reportRefused(schema.refused, catalog);
    const held = new Set(schema.refused.map((r) => r.tableId));
    const first = catalog.tables.filter((t) => !held.has(t.tableId));
    const moved = await this.#pullTables(catalog, first, cursors, this.#opts);
    // Pulls that read across a schema change keeping the records' keys (schema-recheck.ts).
    moved.push(...await this.#readAcross(window, catalog, first, cursors));
    if (moved.length > 0) {
      // Their pulls ended where upstream's schema changed under them, with nothing wrong written
      // (schema-drift.ts): the schema is pulled again, and they are read again under it.
      let again: SchemaPullResult | undefined;
      try {
        again = await pullSchema(ctx, cursors, heldBack);
      } catch (error) {
        if (this.#opts.signal?.aborted) throw error;
        for (const { table } of moved) await this.#tableFailed(table, error);
      }
      if (again) {
        // Later than the first poll's: stored with its plan, or to be stored with the cycle.
        schemaCursors = again.cursors;
        schema = { ...schema, reread: schema.reread || again.reread, operations: [...schema.operations, ...again.operations] };
        if (again.reread) {
          catalog = await ctx.mirror.readCatalog();
          cursors = await ctx.mirror.readCursors();
        }
        const movedIds = new Set(moved.map((m) => m.table.tableId));
        const refused = again.refused.filter((r) => movedIds.has(r.tableId));
        await this.#reportRefused(refused, catalog);
        const refusedIds = new Set(refused.map((r) => r.tableId));
        // A table the schema pull dropped is no longer mirrored, nor reported.
        const retry = catalog.tables.filter((t) => movedIds.has(t.tableId) && !refusedIds.has(t.tableId));
        // They were due: a scan that finished this cycle, undone, is made again.
        const movedAgain = await this.#pullTables(catalog, retry, cursors, { ...this.#opts, forceFullScan: true });
        movedAgain.push(...await this.#readAcross(again.window, catalog, retry, cursors));
        for (const { table, error } of movedAgain) {
          // Upstream's schema changed again while the table was read: it waits for the next
          // cycle's schema pull, its rows and cursors as the pull left them. No error: nothing is wrong.
          ctx.logger.warn({ table: tableLabel(table), reason: error.message }, 'the table\'s schema changed upstream again while it was read; it is read at the next cycle');
          tables.push({ tableId: table.tableId, table: tableLabel(table), mode: table.mode, action: 'deferred', upserted: 0, deleted: 0 });
        }
      }
    }
    return { tables, schema: { reread: schema.reread, operations: schema.operations }, schemaCursors };
  }

  /**
   * The tables among `pulling` whose pull this cycle read across a change of their schema that the
   * schema poll of `window` did not see: their pulls are undone (cursors and state back to `catalog`
   * and `cursors`, as the pull began) and their reports taken back, for the caller to pull the
   * schema again and read them again. When the change log cannot be read, no pull can be trusted:
   * each is undone and reported failed.
   */
  async #readAcross(
    window: SchemaPollWindow, catalog: Catalog, pulling: readonly MirrorTable[], cursors: ReadonlyMap<string, string>,
  ): Promise<Moved[]> {
    const ctx = this.#ctx;
    const tables = this.#tables;
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
    const moved: Moved[] = [];
    for (const table of pulled.filter((t) => changed.has(t.tableId))) {
      // Pulled in this cycle (it wrote rows), so its start was taken.
      await undoPull(ctx, table, this.#pullStarts.get(table.tableId)!, cursors);
      tables.splice(tables.findIndex((t) => t.tableId === table.tableId), 1);
      if (failure) {
        await this.#tableFailed(table, failure.error);
        continue;
      }
      const error = new TableSchemaMovedError(`${tableLabel(table)}: its schema changed upstream while its records were read`);
      ctx.logger.info({ table: tableLabel(table), reason: error.message }, 'the table\'s schema changed upstream during its pull; pulling the schema again');
      moved.push({ table, error });
    }
    return moved;
  }

  /** Reports the tables a schema pull refused, failed, with the reason recorded on those mirrored. */
  async #reportRefused(refused: readonly RefusedTable[], catalog: Catalog): Promise<void> {
    const tables = this.#tables;
    const mirrored = new Set(catalog.tables.map((t) => t.tableId));
    for (const r of refused) {
      const error = { code: r.code, message: r.message };
      this.#ctx.logger.error({ table: r.table, err: error }, 'table refused');
      // A table never mirrored has no row to record it on: the report and the log say it.
      if (mirrored.has(r.tableId)) await this.#recordTableError(r.tableId, error);
      tables.push({ tableId: r.tableId, table: r.table, mode: r.mode, action: 'failed', upserted: 0, deleted: 0, error });
    }
  }

  async #tableFailed(table: MirrorTable, error: unknown): Promise<void> {
    const tables = this.#tables;
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
    catalog: Catalog, pulling: readonly MirrorTable[], cursors: ReadonlyMap<string, string>, opts: TablePullOptions,
  ): Promise<Moved[]> {
    const ctx = this.#ctx;
    const tables = this.#tables;
    const { logger, observer } = ctx;
    const moved: Moved[] = [];
    for (const table of pulling) {
      const name = tableLabel(table);
      opts.signal?.throwIfAborted();
      logger.debug({ table: name, mode: table.mode, state: table.state }, 'pulling table');
      this.#pullStarts.set(table.tableId, pullStartOf(table));
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
        await this.#tableFailed(table, error);
      }
    }
    return moved;
  }

  async #recordTableError(tableId: string, error: { code: string; message: string }): Promise<void> {
    try {
      await this.#ctx.mirror.setTableState(tableId, { lastError: { ...error, at: new Date().toISOString() } });
    } catch (writeError) {
      this.#ctx.logger.warn({ tableId, err: errorInfo(writeError) }, 'could not record the table error in the mirror');
    }
  }
}
