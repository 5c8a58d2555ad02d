import { sql } from 'kysely';
import { CATALOG_MIGRATIONS, CATALOG_TABLES, CATALOG_VERSION, checkCatalogVersion } from '../catalog-tables.ts';
import { ConfigError } from '../../errors.ts';
import { columnDdl } from '../catalog-ddl.ts';
import { sqlTypeOf } from '../dialects.ts';
import { readCatalogVersion } from '../catalog-version.ts';
import type { WriteTx } from '../dialect.ts';
import type { MirrorContext } from '../mirror-context.ts';
import { missingViewNames } from '../schema-planner.ts';
import { SYNCED_AT_COLUMN } from '../naming.ts';
import { restoreDerivedObjects, setAsideDerivedObjects } from './derived-objects.ts';
import { readCatalog, readCatalogTables } from './read-catalog.ts';
import { createReferenceIndex } from './reference-indexes.ts';

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
 * functions are executable by their owner only, and each serves its own table only.
 */
export const CAPTURE_VERSION = 9;

/**
 * The versions a catalog records: its layout and its capture set-up, and whether either is older
 * than this wsmirror's. A newer one of either is refused: this version would put back its own,
 * older, set-up (a capture set-up is a security boundary on Postgres, see version 9).
 */
export async function catalogVersions(ctx: MirrorContext): Promise<{ stored: number; capture: string | undefined; older: boolean }> {
  const cat = ctx.driver.catalog(ctx.driver.db);
  const layout = await readCatalogVersion(cat);
  checkCatalogVersion(layout);
  const capture = (await cat.selectFrom('_wsmirror_meta').select('value').where('key', '=', 'capture_version').executeTakeFirst())?.value;
  if (capture !== undefined && Number(capture) > CAPTURE_VERSION) {
    throw new ConfigError(`the catalog was written by a newer wsmirror (capture set-up ${capture}; this one knows ${CAPTURE_VERSION})`);
  }
  const stored = Number(layout);
  return { stored, capture, older: stored < CATALOG_VERSION || capture !== String(CAPTURE_VERSION) };
}

/**
 * Brings an existing catalog to this version's layout (CATALOG_MIGRATIONS) and installs the
 * capture triggers when they are missing or older, in one daemon transaction. The catalog's own
 * tables change first; then the DDL on mirrored tables runs with their derived objects set aside,
 * and those are made again in this version's form.
 */
export async function migrateCatalog(ctx: MirrorContext): Promise<void> {
  const d = ctx.driver;
  const { stored, capture, older } = await catalogVersions(ctx);
  if (!older) return;
  // Names in use are read before the transaction (the namespace listing runs on the connection).
  const viewNames = stored < 3 ? missingViewNames(await readCatalog(ctx)) : new Map<string, string>();
  ctx.tables = undefined;
  await d.write(async (tx) => {
    const txCat = d.catalog(tx.db);
    for (const migration of CATALOG_MIGRATIONS) {
      if (migration.version <= stored) continue;
      for (const { table, column } of migration.addColumns) {
        const def = CATALOG_TABLES.find((t) => t.name === table)!.columns.find((c) => c.name === column)!;
        await sql`ALTER TABLE ${d.table(table)} ADD COLUMN ${columnDdl(ctx.dialect, def, false)}`.execute(tx.db);
      }
      for (const index of migration.dropIndexes ?? []) await sql`DROP INDEX IF EXISTS ${d.table(index)}`.execute(tx.db);
      for (const table of migration.restateChecks ?? []) await d.restateChecks(tx, CATALOG_TABLES.find((t) => t.name === table)!);
    }
    await setAsideDerivedObjects(ctx, tx);
    if (stored < 5) await convertColumnTypes(ctx, tx);
    if (stored < 3) await addBiObjects(ctx, tx, viewNames);
    if (Number(capture ?? 0) < 2) {
      const tables = await txCat.selectFrom('_wsmirror_tables').select('sql_name').execute();
      for (const t of tables) await d.dropNotNull(tx, t.sql_name, SYNCED_AT_COLUMN);
    }
    await restoreDerivedObjects(ctx, tx);
    if (stored < CATALOG_VERSION) {
      await txCat.updateTable('_wsmirror_meta').set({ value: String(CATALOG_VERSION) }).where('key', '=', 'catalog_version').execute();
    }
    await txCat.deleteFrom('_wsmirror_meta').where('key', '=', 'capture_version').execute();
    await txCat.insertInto('_wsmirror_meta').values({ key: 'capture_version', value: String(CAPTURE_VERSION) }).execute();
  });
}

/**
 * Layout 5: a column whose field this version maps to another SQL type (appointments became
 * `tstzrange` on Postgres) is converted in place where the dialect can, values and pending
 * edits kept; any other is left to the schema planner, which rebuilds it and re-reads its table.
 */
async function convertColumnTypes(ctx: MirrorContext, tx: WriteTx): Promise<void> {
  const cat = ctx.driver.catalog(tx.db);
  const { tables, fields } = await readCatalogTables(ctx.driver, cat);
  const sqlNameOf = new Map(tables.map((t) => [t.tableId, t.sqlName]));
  const conversions = fields.flatMap((f) => {
    const to = sqlTypeOf(ctx.dialect.name, f.fieldType);
    if (to === f.sqlType) return [];
    const statements = ctx.dialect.convertColumnSql(ctx.driver.names, { sqlTable: sqlNameOf.get(f.tableId)!, column: f.columnName, from: f.sqlType, to });
    return statements === null ? [] : [{ field: f, to, statements }];
  });
  for (const { field, to, statements } of conversions) {
    ctx.logger?.info({ table: sqlNameOf.get(field.tableId), column: field.columnName, from: field.sqlType, to }, 'column converted to its new SQL type');
    await ctx.driver.runScript(tx, statements);
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
