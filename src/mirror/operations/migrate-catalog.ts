import { sql } from 'kysely';
import { CATALOG_MIGRATIONS, CATALOG_TABLES, CATALOG_VERSION, checkCatalogVersion } from '../catalog-tables.ts';
import { ConfigError } from '../../errors.ts';
import { columnDdl } from '../catalog-ddl.ts';
import { sqlTypeOf } from '../dialects.ts';
import { tableLabel, type MirrorField, type MirrorTable } from '../catalog.ts';
import { MirrorLockedError, TableSchemaError } from '../errors.ts';
import type { WriteTx } from '../dialect-driver.ts';
import type { MirrorContext } from '../mirror-context.ts';
import { missingViewNames } from '../schema-planner.ts';
import { SYNCED_AT_COLUMN } from '../naming.ts';
import { captureTables, createCapture, dropCapture } from './capture.ts';
import { derivedScope, restoreDerivedObjects, setAsideDerivedObjects, tablesOf } from './derived-objects.ts';
import { lockForMigration } from './schema-change-locks.ts';
import { readCatalog, readCatalogTables } from './read-catalog.ts';
import { rebindViews } from './readable-views.ts';
import { createReferenceIndex } from './reference-indexes.ts';
import type { UnmigratedTable } from '../mirror.ts';
import { writeTableState } from './table-state.ts';
import { parseUnmigrated, UNMIGRATED_KEY, unmigratedMessage } from './unmigrated-tables.ts';

/**
 * Version of the capture set-up of the mirrored tables: their triggers, and what the triggers
 * need of the tables. A mirror whose set-up is older (or absent, as in catalog layout 1) is
 * brought up to date when opened for writing. 2: `_synced_at` accepts NULL, so a plain local
 * INSERT needs to name no system column. 3: Postgres captures updated values with fixed time
 * zone and date style. 4: SQLite captures an UPDATE with one trigger per column. 5: Postgres turns
 * only the changed columns' values into JSON. 6: Postgres' insert trigger skips the daemon's
 * writes in its WHEN clause. 7: Postgres' capture functions write the outbox as their owner, so
 * an editing role needs no right on it. 8: SQLite captures a REAL with 17 significant digits and
 * an infinity as JSON text, whatever the editing client's SQLite version; Postgres lets an INSERT
 * naming a row's id reach that row (ON CONFLICT) and refuses TRUNCATE. 9: Postgres' capture
 * functions are executable by their owner only, and each serves its own table only. 10: SQLite
 * captures a REPLACE naming a row's id as an update of that row (`_wsmirror_replaced`) and a BLOB
 * as an object the push refuses, and lets the insert trigger's own id change only through.
 * 11: SQLite's REPLACE of a row keeps the row's `_synced_at`. 12: Postgres' capture functions
 * all run on a fixed search path, and the readable views are bound again (VIEWS_BOUND_SAFELY).
 * 13: Postgres' triggers leave out the daemon's writes in their WHEN clauses only, and only for a
 * role that may write the outbox: a writer setting the daemon's marker is captured and guarded.
 * 14: SQLite's triggers call no function with more than 127 arguments (a wide table's made the
 * file unreadable to SQLite before 3.48, sqlite/json-array.ts).
 * 15: SQLite's triggers are about a quarter smaller (each connection holds them parsed, and each
 * ALTER TABLE parses them again): a REPLACE's updates are one statement for all columns.
 */
export const CAPTURE_VERSION = 15;

/**
 * From this capture version on, the daemon made the readable views on a fixed search path, with
 * their calls schema-qualified (postgres/search-path.ts). Those of an older mirror may call
 * functions a role planted on the search path of the daemon's role: the migration binds them
 * again in place (rebindViews), keeping views of users' own on them.
 */
const VIEWS_BOUND_SAFELY = 12;

/**
 * The versions a catalog records: its layout and its capture set-up, whether either is older
 * than this wsmirror's, and how many tables an earlier migration held back. A newer one of either is refused: this version would put back its own,
 * older, set-up (a capture set-up is a security boundary on Postgres, see version 9). `recapture`:
 * the capture set-up is to be made again, being older or made for the mirror under another name
 * (DialectDriver.captureMadeElsewhere).
 */
export async function catalogVersions(ctx: MirrorContext): Promise<{
  stored: number; capture: number; recapture: boolean; elsewhere: boolean; older: boolean; unmigrated: number;
}> {
  const meta = new Map((await ctx.driver.catalog(ctx.driver.db).selectFrom('_wsmirror_meta').select(['key', 'value'])
    .where('key', 'in', ['catalog_version', 'capture_version', UNMIGRATED_KEY]).execute()).map((r) => [r.key, r.value]));
  const layout = meta.get('catalog_version');
  checkCatalogVersion(layout);
  const capture = Number(meta.get('capture_version') ?? 0);
  if (capture > CAPTURE_VERSION) {
    throw new ConfigError(`the catalog was written by a newer wsmirror (capture set-up ${capture}; this one knows ${CAPTURE_VERSION})`);
  }
  const stored = Number(layout);
  const elsewhere = await ctx.driver.captureMadeElsewhere();
  const recapture = capture < CAPTURE_VERSION || elsewhere;
  const older = stored < CATALOG_VERSION || recapture;
  // Tables an earlier migration held back (unmigrated-tables.ts): each cycle tries them again.
  return { stored, capture, recapture, elsewhere, older, unmigrated: parseUnmigrated(meta.get(UNMIGRATED_KEY)).length };
}

/**
 * What the next open for writing brings up to this version, one line each; empty when nothing.
 * For `wsmirror check`, which writes nothing: a mirror to upgrade is no failure.
 */
export async function pendingUpgrades(ctx: MirrorContext): Promise<string[]> {
  const { stored, capture, elsewhere } = await catalogVersions(ctx);
  const lines: string[] = [];
  if (stored < CATALOG_VERSION) lines.push(`the next sync brings the catalog up to this version of wsmirror (layout ${stored} to ${CATALOG_VERSION})`);
  if (capture < CAPTURE_VERSION) {
    lines.push(`the next sync upgrades the capture set-up (version ${capture} to ${CAPTURE_VERSION}): it makes every table's capture triggers again, as this version of wsmirror makes them`);
  } else if (elsewhere) {
    lines.push('the next sync makes the capture functions again: they name the mirror\'s schema under another name (renamed, or restored under '
      + 'another name), and local edits fail until then');
  }
  return lines;
}

/**
 * Brings an existing catalog to this version's layout (CATALOG_MIGRATIONS) and installs the
 * capture triggers when they are missing, older or made for another schema name, in one daemon
 * transaction. The catalog's own tables change first. Then only what the migration has to rebuild
 * is: the capture triggers of every table when the capture set-up is to be made again (triggers
 * and functions, which nothing else depends on), and the readable views and foreign keys of the
 * tables whose columns it converts (and of the tables referencing them), set aside around the DDL
 * and made again in this version's form; on a catalog older than layout 3, which had none, every
 * table's are made. The other tables' views are bound again in place when the capture set-up
 * predates VIEWS_BOUND_SAFELY.
 * A view of a user's own on a readable view or on a converted column stays in the way of its
 * table only: the database refusing that table's DDL holds the table back (unmigrated-tables.ts),
 * and the migration is tried again without it, until every table has applied or is held back.
 * Returns the tables held back, those of an earlier open included.
 */
export async function migrateCatalog(ctx: MirrorContext): Promise<UnmigratedTable[]> {
  const d = ctx.driver;
  const { stored, capture, recapture, older, unmigrated } = await catalogVersions(ctx);
  if (!older && unmigrated === 0) return [];
  // Names in use are read before the transaction (the namespace listing runs on the connection).
  const viewNames = stored < 3 ? missingViewNames(await readCatalog(ctx)) : new Map<string, string>();
  const held: UnmigratedTable[] = [];
  // Each attempt rolls back whole, so at most one attempt per table (as a schema change's).
  for (;;) {
    ctx.tables = undefined;
    try {
      await d.write((tx) => migrateIn(ctx, tx, { stored, capture, recapture, viewNames, held }));
      return held;
    } catch (error) {
      if (error instanceof MirrorLockedError) {
        throw new MirrorLockedError(`upgrading the mirror to this version of wsmirror: ${error.message}; nothing was changed, and the next start tries again`, { cause: error });
      }
      if (!(error instanceof TableSchemaError)) throw error;
      const more = await tablesHeldBy(ctx, error, held);
      if (more.length === 0) throw error;
      for (const table of more) {
        const message = unmigratedMessage(table, error);
        ctx.logger?.warn({ table: tableLabel(table), err: { code: error.code, message } }, 'migration of a table refused by the mirror; migrating the others');
        held.push({ tableId: table.tableId, message });
      }
    } finally {
      ctx.tables = undefined;
    }
  }
}

/** One attempt, leaving out the tables of `held`. */
async function migrateIn(
  ctx: MirrorContext, tx: WriteTx,
  { stored, capture, recapture, viewNames, held }: {
    stored: number; capture: number; recapture: boolean; viewNames: ReadonlyMap<string, string>; held: readonly UnmigratedTable[];
  },
): Promise<void> {
  const d = ctx.driver;
  const txCat = d.catalog(tx.db);
  const migrations = CATALOG_MIGRATIONS.filter((m) => m.version > stored);
  // The catalog tables first, before their columns are read: on an old layout the mirrored
  // tables' locks need columns these migrations add (view_name).
  await lockForMigration(ctx, tx, {
    catalogTables: [...new Set(migrations.flatMap((m) => [...m.addColumns.map((c) => c.table), ...(m.restateChecks ?? [])]))],
    tableIds: new Set(), viewTableIds: new Set(),
  });
  for (const migration of migrations) {
    for (const { table, column } of migration.addColumns) {
      const def = CATALOG_TABLES.find((t) => t.name === table)!.columns.find((c) => c.name === column)!;
      await sql`ALTER TABLE ${d.table(table)} ADD COLUMN ${columnDdl(ctx.dialect, def, false)}`.execute(tx.db);
    }
    for (const index of migration.dropIndexes ?? []) await sql`DROP INDEX IF EXISTS ${d.table(index)}`.execute(tx.db);
    for (const table of migration.restateChecks ?? []) await d.restateChecks(tx, CATALOG_TABLES.find((t) => t.name === table)!);
  }
  const heldIds = new Set(held.map((t) => t.tableId));
  const all = await captureTables(ctx, tx);
  // Conversions are found from the fields' SQL types, whatever the layout: a table held back
  // by an earlier open still has them to do.
  const conversions = (await columnConversions(ctx, tx)).filter((c) => !heldIds.has(c.field.tableId));
  const rebuilt = stored < 3 ? all.map((t) => t.tableId).filter((id) => !heldIds.has(id)) : conversions.map((c) => c.field.tableId);
  const rebuiltScope = await derivedScope(ctx, tx, new Set(rebuilt));
  const allIds = new Set(all.map((t) => t.tableId));
  await lockForMigration(ctx, tx, {
    catalogTables: [],
    tableIds: recapture ? allIds : rebuiltScope,
    viewTableIds: capture < VIEWS_BOUND_SAFELY ? allIds : rebuiltScope,
  });
  const scope = await setAsideDerivedObjects(ctx, tx, new Set(rebuilt));
  const setAside = tablesOf(scope)!;
  // The other tables keep their views and keys; an older capture set-up is replaced all the same.
  const recaptured = recapture ? all.filter((t) => !setAside.has(t.tableId)) : [];
  await dropCapture(ctx, tx, recaptured);
  await convertColumnTypes(ctx, tx, conversions);
  if (stored < 3) await addBiObjects(ctx, tx, viewNames);
  if (capture < 2) {
    for (const t of all) await d.dropNotNull(tx, t.sqlName, SYNCED_AT_COLUMN);
  }
  await restoreDerivedObjects(ctx, tx, scope);
  await createCapture(ctx, tx, recaptured);
  // Views the migration did not make again above; those of held tables keep their older form.
  if (capture < VIEWS_BOUND_SAFELY) await rebindViews(ctx, tx, new Set([...allIds].filter((id) => !setAside.has(id) && !heldIds.has(id))));
  if (stored < CATALOG_VERSION) {
    await txCat.updateTable('_wsmirror_meta').set({ value: String(CATALOG_VERSION) }).where('key', '=', 'catalog_version').execute();
  }
  await txCat.deleteFrom('_wsmirror_meta').where('key', '=', 'capture_version').execute();
  await txCat.insertInto('_wsmirror_meta').values({ key: 'capture_version', value: String(CAPTURE_VERSION) }).execute();
  await recordUnmigrated(ctx, tx, held);
}

/**
 * Writes the list and, as each held table's last error, why: `wsmirror status` shows them
 * failing from the moment they are held, even before a cycle.
 */
async function recordUnmigrated(ctx: MirrorContext, tx: WriteTx, held: readonly UnmigratedTable[]): Promise<void> {
  const cat = ctx.driver.catalog(tx.db);
  await cat.deleteFrom('_wsmirror_meta').where('key', '=', UNMIGRATED_KEY).execute();
  if (held.length === 0) return;
  await cat.insertInto('_wsmirror_meta').values({ key: UNMIGRATED_KEY, value: JSON.stringify(held.map((t) => t.tableId)) }).execute();
  const at = new Date().toISOString();
  for (const { tableId, message } of held) await writeTableState(ctx, tx, tableId, { lastError: { code: 'MIRROR', message, at } });
}

/**
 * The tables to hold back for a refusal naming `error.tableId`: that table when the migration
 * converts it, otherwise the converted tables it references (its view shows their display
 * column, so it was rebuilt with them). None new: the refusal is not one a table can be held for.
 */
async function tablesHeldBy(ctx: MirrorContext, error: TableSchemaError, held: readonly UnmigratedTable[]): Promise<MirrorTable[]> {
  const catalog = await readCatalog(ctx);
  const converted = new Set(pendingConversions(ctx, catalog).map((c) => c.field.tableId));
  const ids = converted.has(error.tableId) || !converted.size
    ? new Set([error.tableId])
    : new Set(catalog.fields.filter((f) => f.tableId === error.tableId && f.refTableId !== null && converted.has(f.refTableId)).map((f) => f.refTableId!));
  return catalog.tables.filter((t) => ids.has(t.tableId) && !held.some((h) => h.tableId === t.tableId));
}

/**
 * Layout 5: a column whose field this version maps to another SQL type (appointments became
 * `tstzrange` on Postgres) is converted in place where the dialect can, values and pending
 * edits kept; any other is left to the schema planner, which rebuilds it and re-reads its table.
 */
type ColumnConversion = { field: MirrorField; sqlTable: string; to: string; statements: string[] };

function pendingConversions(ctx: MirrorContext, { tables, fields }: { tables: readonly MirrorTable[]; fields: readonly MirrorField[] }): ColumnConversion[] {
  const sqlNameOf = new Map(tables.map((t) => [t.tableId, t.sqlName]));
  return fields.flatMap((f) => {
    const to = sqlTypeOf(ctx.dialect.name, f.fieldType);
    if (to === f.sqlType) return [];
    const sqlTable = sqlNameOf.get(f.tableId)!;
    const statements = ctx.dialect.convertColumnSql(ctx.driver.names, { sqlTable, column: f.columnName, from: f.sqlType, to });
    return statements === null ? [] : [{ field: f, sqlTable, to, statements }];
  });
}

async function columnConversions(ctx: MirrorContext, tx: WriteTx): Promise<ColumnConversion[]> {
  return pendingConversions(ctx, await readCatalogTables(ctx.driver, ctx.driver.catalog(tx.db)));
}

/** Runs the conversions; one the database refuses (a view of a user's own on the column) names its table. */
async function convertColumnTypes(ctx: MirrorContext, tx: WriteTx, conversions: readonly ColumnConversion[]): Promise<void> {
  const cat = ctx.driver.catalog(tx.db);
  for (const { field, sqlTable, to, statements } of conversions) {
    ctx.logger?.info({ table: sqlTable, column: field.columnName, from: field.sqlType, to }, 'column converted to its new SQL type');
    try {
      await ctx.driver.runScript(tx, statements);
    } catch (error) {
      throw new TableSchemaError(field.tableId, error);
    }
    await cat.updateTable('_wsmirror_fields').set({ sql_type: to })
      .where('table_id', '=', field.tableId).where('field_id', '=', field.fieldId).execute();
  }
}

/**
 * Layout 3 on a mirror made before it: view names and the indexes of reference columns (the
 * fields' SQL tables, the readable views and the foreign keys come with the derived objects).
 */
async function addBiObjects(ctx: MirrorContext, tx: WriteTx, viewNames: ReadonlyMap<string, string>): Promise<void> {
  const cat = ctx.driver.catalog(tx.db);
  for (const [tableId, viewName] of viewNames) {
    await cat.updateTable('_wsmirror_tables').set({ view_name: viewName }).where('table_id', '=', tableId).execute();
  }
  const { tables, fields } = await readCatalogTables(ctx.driver, cat);
  const sqlNameOf = new Map(tables.map((t) => [t.tableId, t.sqlName]));
  for (const f of fields) await createReferenceIndex(ctx, tx, sqlNameOf.get(f.tableId)!, f);
}
