import type { WriteTx } from '../dialect-driver.ts';
import type { MirrorContext } from '../mirror-context.ts';
import { MirrorError, TableSchemaError } from '../errors.ts';
import type { CaptureTable } from '../sql-text.ts';
import { quoteIdent } from '../sql-text.ts';

/**
 * The capture triggers of every mirrored table (each dialect's capture-triggers.ts writes them).
 * They are derived objects (derived-objects.ts): set aside around DDL and made again from the
 * catalog, so they always name the current columns.
 */

/** Mirrored tables (those of `only`, when given) and their fields as the catalog holds them inside `tx`. */
export async function captureTables(ctx: MirrorContext, tx: WriteTx, only?: ReadonlySet<string>): Promise<CaptureTable[]> {
  const cat = ctx.driver.catalog(tx.db);
  if (only !== undefined && only.size === 0) return [];
  let query = cat.selectFrom('_wsmirror_tables').select(['table_id', 'sql_name']).orderBy('table_id');
  if (only !== undefined) query = query.where('table_id', 'in', [...only]);
  const tables = await query.execute();
  let fieldQuery = cat.selectFrom('_wsmirror_fields').select(['table_id', 'field_id', 'column_name', 'is_read_only'])
    .orderBy('table_id').orderBy('position');
  if (only !== undefined) fieldQuery = fieldQuery.where('table_id', 'in', [...only]);
  const fieldsOf = new Map<string, CaptureTable['fields'][number][]>();
  for (const f of await fieldQuery.execute()) {
    const field = { fieldId: f.field_id, columnName: f.column_name, readOnly: ctx.driver.fromBool(f.is_read_only) };
    const list = fieldsOf.get(f.table_id);
    if (list) list.push(field);
    else fieldsOf.set(f.table_id, [field]);
  }
  return tables.map((t) => ({ tableId: t.table_id, sqlName: t.sql_name, fields: fieldsOf.get(t.table_id) ?? [] }));
}

/** The scripts of `tables`, one table at a time: the capture of 1,500 tables of 40 fields is some 90 MB of text. */
function* scriptOf(tables: readonly CaptureTable[], tableScript: (t: CaptureTable) => string[]): Generator<string> {
  for (const t of tables) yield* tableScript(t);
}

export async function dropCapture(ctx: MirrorContext, tx: WriteTx, tables: readonly CaptureTable[]): Promise<void> {
  await ctx.driver.runScript(tx, scriptOf(tables, (t) => ctx.dialect.dropCaptureSql(ctx.driver.names, t)));
}

const SAVEPOINT = quoteIdent('_wsmirror_capture');

/**
 * Makes the capture of `tables`, all in one script (on Postgres one round trip per 4 MiB of it,
 * made a table at a time). One table whose capture the database refuses (an object of a user's holding the name of
 * one of its triggers or functions) fails alone: the script is undone to its savepoint and the
 * tables are made one by one until that table's fails, as a TableSchemaError naming it and the
 * database's reason: the schema pull holds that table back and applies the others.
 */
export async function createCapture(ctx: MirrorContext, tx: WriteTx, tables: readonly CaptureTable[]): Promise<void> {
  if (tables.length === 0) return;
  const tableScript = (t: CaptureTable) => ctx.dialect.createCaptureSql(ctx.driver.names, t);
  try {
    await ctx.driver.runScript(tx, (function* () {
      yield `SAVEPOINT ${SAVEPOINT}`;
      yield* scriptOf(tables, tableScript);
      yield `RELEASE SAVEPOINT ${SAVEPOINT}`;
    })());
    return;
  } catch (error) {
    try {
      await ctx.driver.runScript(tx, [`ROLLBACK TO SAVEPOINT ${SAVEPOINT}`]);
    } catch {
      throw error;
    }
  }
  for (const t of tables) {
    try {
      await ctx.driver.runScript(tx, tableScript(t));
    } catch (error) {
      // Postgres' hint names the object in the way where its message does not ("Use DROP FUNCTION … first").
      const hint = (error as { hint?: unknown } | null)?.hint;
      const reason = `${error instanceof Error ? error.message : String(error)}${typeof hint === 'string' ? ` (${hint})` : ''}`;
      throw new TableSchemaError(t.tableId, new MirrorError(`the capture of ${t.sqlName} could not be made: ${reason}`, { cause: error }));
    }
  }
  await ctx.driver.runScript(tx, [`RELEASE SAVEPOINT ${SAVEPOINT}`]);
}
