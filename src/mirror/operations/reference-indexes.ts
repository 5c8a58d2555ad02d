import { sql } from 'kysely';
import type { MirrorField } from '../catalog.ts';
import type { WriteTx } from '../dialect-driver.ts';
import type { MirrorContext } from '../mirror-context.ts';
import { fieldObjectName } from '../naming.ts';
import { valueKindOf } from '../value-kind.ts';

/**
 * An index on every reference column, so joins through a reference (and BI tools following it)
 * do not scan. A new table gets its indexes when its first full read ends (`ensureReferenceIndexes`
 * with the change of state to `ready`): one sorted build then costs far less than updating the
 * index row by row in random order through the backfill (bench/README.md, "pull"). The statement is the same in both dialects. Table and column renames carry
 * indexes along; the name (naming.ts, `fieldObjectName`) stays right through them.
 */
function referenceIndexName(tableId: string, fieldId: string): string {
  return fieldObjectName('ref', tableId, fieldId);
}

function isIndexed(field: Pick<MirrorField, 'fieldType'>): boolean {
  return valueKindOf(field.fieldType) === 'reference';
}

type IndexedField = Pick<MirrorField, 'tableId' | 'fieldId' | 'columnName' | 'fieldType'>;

/** Creates the index of `field` when it is a reference (no-op otherwise, or when it exists). */
export async function createReferenceIndex(ctx: MirrorContext, tx: WriteTx, sqlTable: string, field: IndexedField): Promise<void> {
  await ctx.driver.runScript(tx, referenceIndexSql(ctx, tx, sqlTable, field));
}

/** The statement creating the index of `field` when it is a reference; none otherwise. */
export function referenceIndexSql(ctx: MirrorContext, tx: WriteTx, sqlTable: string, field: IndexedField): string[] {
  if (!isIndexed(field)) return [];
  const name = referenceIndexName(field.tableId, field.fieldId);
  return [sql`CREATE INDEX IF NOT EXISTS ${sql.id(name)} ON ${ctx.driver.table(sqlTable)} (${sql.id(field.columnName)})`.compile(tx.db).sql];
}

/**
 * Drops the index of `field`'s column, if there is one (whatever the field's type now: a retyped
 * field had its old one); SQLite refuses to drop an indexed column.
 */
export async function dropReferenceIndex(ctx: MirrorContext, tx: WriteTx, field: Pick<MirrorField, 'tableId' | 'fieldId'>): Promise<void> {
  await sql`DROP INDEX IF EXISTS ${ctx.driver.table(referenceIndexName(field.tableId, field.fieldId))}`.execute(tx.db);
}

/**
 * Creates the missing indexes of a table's reference columns: called as the table becomes
 * `ready`. Cheap when they exist (the statement only looks the name up).
 */
export async function ensureReferenceIndexes(ctx: MirrorContext, tx: WriteTx, tableId: string): Promise<void> {
  const cat = ctx.driver.catalog(tx.db);
  const table = await cat.selectFrom('_wsmirror_tables').select('sql_name').where('table_id', '=', tableId).executeTakeFirst();
  if (!table) return;
  const fields = await cat.selectFrom('_wsmirror_fields').select(['field_id', 'column_name'])
    .where('table_id', '=', tableId).where('field_type', '=', 'reference').execute();
  for (const f of fields) {
    await createReferenceIndex(ctx, tx, table.sql_name, { tableId, fieldId: f.field_id, columnName: f.column_name, fieldType: 'reference' });
  }
}
