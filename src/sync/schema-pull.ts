import type { Workspace } from '../api/workspace.ts';
import { SCHEMA_CURSOR_KEY, tableLabel, type MirrorTable } from '../mirror/catalog.ts';
import { MirrorLockedError, TableSchemaError } from '../mirror/errors.ts';
import type { CursorWrites } from '../mirror/mirror.ts';
import { describeOp, planSchema, type SchemaPlan } from '../mirror/schema-planner.ts';
import { describeUnmatchedPattern, unmatchedPatterns } from '../mirror/table-filter.ts';
import { unconfirmedDrops } from './drop-check.ts';
import { leavingMissingTables } from './missing-tables.ts';
import { refusal, refusedTables, type RefusedTable } from './name-rule.ts';
import { encodeRefusals, REFUSED_CURSOR_KEY } from './refused-tables-cursor.ts';
import { tooWideTables } from './width-rule.ts';
import { BEGINNING, nextSince } from './poll-window.ts';
import { schemaChangeKey, type SchemaPollWindow } from './schema-recheck.ts';
import type { SyncContext } from './sync-context.ts';

/** Remembers which include/exclude patterns the catalog was planned with. */
const FILTER_CURSOR_KEY = 'schema:table-filter';

export interface SchemaPullResult {
  /** The workspace was read and diffed (first run, upstream change, or new table patterns). */
  reread: boolean;
  /** DDL operations applied. */
  operations: string[];
  /**
   * Tables left out of the plan, held as the mirror has them: names outside the API's rule,
   * tables wider than the mirror's database holds, and drops that upstream's own answer for the
   * table contradicts. The engine reports them failed.
   */
  refused: RefusedTable[];
  /**
   * The schema cursor after a poll that found no change, for the caller to store with the
   * cycle's last write (one transaction fewer per cycle); stored already when a plan was applied.
   */
  cursors?: CursorWrites;
  /**
   * The next poll's `since`, with the changes this poll read from there: the schema the mirror
   * now has includes them, and a change of the log past them came after (schema-recheck.ts).
   */
  window: SchemaPollWindow;
}

/**
 * Schema pull (DESIGN §4.2): poll schema changes from the saved cursor; on any change, on the
 * first run, or when the table patterns changed, read the whole workspace, diff it against the
 * catalog and apply the plan, less the drops upstream contradicts (drop-check.ts). DDL, catalog and the new cursor commit together. `cursors`: every
 * cursor of the mirror, as read at the start of the cycle. `held`: the tables a catalog migration
 * holds back, refused as they are (a plan would otherwise rebuild the columns it has yet to convert),
 * and those whose SQL table is missing (missing-tables.ts; dropped all the same when they leave the mirror).
 */
export async function pullSchema(ctx: SyncContext, cursors: ReadonlyMap<string, string>, held: readonly RefusedTable[] = []): Promise<SchemaPullResult> {
  const { client, mirror, options } = ctx;
  const since = cursors.get(SCHEMA_CURSOR_KEY);
  const filterKey = JSON.stringify({ include: options.tables.include ?? [], exclude: options.tables.exclude ?? [] });
  // While tables are refused or held the workspace is read every cycle: an upstream that fixes a
  // name or an answer need not log a schema change for it.
  let changed = since === undefined
    || cursors.get(FILTER_CURSOR_KEY) !== filterKey
    || cursors.get(REFUSED_CURSOR_KEY) !== undefined;
  let asOf: string;
  const read: string[] = [];

  if (since === undefined) {
    // First run: only the server's "now" is needed; the whole workspace is read below.
    asOf = (await client.listSchemaChanges({ since: BEGINNING, limit: 1 })).meta.asOf;
  } else {
    // A stop (SIGTERM) ends the poll at its next page.
    const poll = client.pollSchemaChanges({ since, pageSize: options.pageSize, ...(ctx.signal ? { signal: ctx.signal } : {}) });
    for await (const page of poll) {
      if (page.length > 0) changed = true;
      for (const change of page) read.push(schemaChangeKey(change));
    }
    asOf = poll.asOf!;
  }

  const next = { [SCHEMA_CURSOR_KEY]: nextSince(asOf, options.lookbackMs), [FILTER_CURSOR_KEY]: filterKey };
  // A first run read nothing of the log: the workspace it reads is as of `asOf` at least.
  const window = { since: since === undefined ? asOf : next[SCHEMA_CURSOR_KEY], seen: new Set(read) };
  if (!changed) return { reread: false, operations: [], refused: [...held], cursors: { [SCHEMA_CURSOR_KEY]: next[SCHEMA_CURSOR_KEY] }, window };
  const workspace = await client.getWorkspace();
  // A pattern that matches nothing is most likely a typo: say so at every read of the workspace.
  for (const unmatched of unmatchedPatterns(options.tables, workspace)) ctx.logger.warn({ ...unmatched }, describeUnmatchedPattern(unmatched));
  const catalog = await mirror.readCatalog();
  const heldIds = new Set(held.map((r) => r.tableId));
  let refused = [...held, ...refusedTables(workspace, options.tables).filter((r) => !heldIds.has(r.tableId))];
  refused.push(...tooWideTables(workspace, options.tables, catalog.dialect, new Set(refused.map((r) => r.tableId))));
  // A table whose SQL table is missing is held, unless it leaves the mirror now.
  const leaving = leavingMissingTables(catalog, workspace, options.tables, new Set(refused.map((r) => r.tableId)));
  if (leaving.size > 0) refused = refused.filter((r) => !leaving.has(r.tableId));
  let plan = planSchema(catalog, workspace, options.tables, new Set(refused.map((r) => r.tableId)));
  const contradicted = await unconfirmedDrops(client, workspace, plan, catalog.tables);
  if (contradicted.length > 0) {
    refused.push(...contradicted);
    plan = planSchema(catalog, workspace, options.tables, new Set(refused.map((r) => r.tableId)));
  }
  // A table whose DDL the database refuses (a view of a user's own on its column, one of its
  // limits) is held back, and the plan applied without it: the other tables go on. Each attempt
  // rolls back whole, so at most one attempt per table. On Postgres, new tables beyond
  // CREATE_BATCH wait for a later transaction of the same pull (the cursors go with the last).
  const applied: string[] = [];
  let catalogNow = catalog;
  for (;;) {
    const refusedIds = new Set(refused.map((r) => r.tableId));
    const later = catalog.dialect === 'postgres' ? laterCreates(plan) : new Set<string>();
    const step = later.size === 0 ? plan : planSchema(catalogNow, workspace, options.tables, new Set([...refusedIds, ...later]));
    try {
      await mirror.applySchemaPlan(step, later.size === 0
        ? { cursors: { ...next, [REFUSED_CURSOR_KEY]: encodeRefusals(refused, new Date().toISOString()) } }
        : {});
    } catch (error) {
      if (!(error instanceof TableSchemaError) || refused.some((r) => r.tableId === error.tableId)) throw error;
      const held = heldBack(error, catalogNow.tables, workspace);
      ctx.logger.error({ tableId: error.tableId, err: { code: held.code, message: held.message } }, 'schema change of a table held back by the mirror; applying the others');
      refused.push(held);
      plan = planSchema(catalogNow, workspace, options.tables, new Set(refused.map((r) => r.tableId)));
      continue;
    }
    applied.push(...step.ops.map(describeOp));
    if (later.size === 0) break;
    catalogNow = await mirror.readCatalog();
    plan = planSchema(catalogNow, workspace, options.tables, refusedIds);
  }
  if (applied.length > 0) ctx.logger.info({ operations: applied }, 'schema applied');
  return { reread: true, operations: applied, refused, window };
}

/**
 * New tables one transaction creates at most. Each holds a few locks until the transaction ends
 * (its table, index, TOAST table, view, capture trigger function) in Postgres' shared lock table,
 * of max_locks_per_transaction × max_connections slots (6,400 by default): a first sync of 1,500
 * tables in one transaction ran out of them after about 1,000 ("out of shared memory"), which
 * read as the failure of whichever table's DDL met it, held back and tried again without it, over
 * and over. SQLite has no such table, and each of its transactions that makes capture triggers
 * loads the whole schema once (sqlite/trigger-batch.ts): it creates them all at once.
 */
const CREATE_BATCH = 200;

/** The tables `plan` creates past the first CREATE_BATCH: left for a later transaction. */
function laterCreates(plan: SchemaPlan): Set<string> {
  const creates = plan.ops.flatMap((op) => (op.op === 'createTable' ? [op.table.tableId] : []));
  return new Set(creates.slice(CREATE_BATCH));
}

/**
 * The table whose schema change the mirror refused, as the engine reports it: `MIRROR` with the
 * database's reason (and what to do, when objects of the user's stand in its way), or
 * `MIRROR_LOCKED` when other sessions held its locks (the message names them).
 */
function heldBack(error: TableSchemaError, tables: readonly MirrorTable[], workspace: Workspace): RefusedTable {
  const mirrored = tables.find((t) => t.tableId === error.tableId);
  const locked = error.cause instanceof MirrorLockedError;
  const code = locked ? 'MIRROR_LOCKED' : 'MIRROR';
  // The database's reason names the objects of the user's in the way; what to do about them is ours to say.
  const advice = error.dependants ? '; drop that object of yours: the next cycle applies the change, and you can make it again after it' : '';
  const left = `left as it was and not pulled until it applies${locked ? ' (tried again at every cycle)' : ''}: ${error.message}${advice}`;
  for (const module of workspace.modules) {
    const table = module.tables.find((t) => t.id === error.tableId);
    if (table) {
      return refusal(module.name, table, code, (label) => (locked
        ? `the schema change of table ${label} is held back, the table ${left}`
        : `the mirror refused the schema change of table ${label}, which is ${left}`));
    }
  }
  const label = mirrored ? tableLabel(mirrored) : error.tableId;
  return {
    tableId: error.tableId, table: label, mode: mirrored?.mode ?? 'fullscan', code,
    message: locked ? `the drop of table ${label} is held back, the table ${left}` : `the mirror refused to drop table ${label}, which is ${left}`,
  };
}
