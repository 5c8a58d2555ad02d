import { sql } from 'kysely';
import { tableCursorPrefix } from '../catalog.ts';
import type { MirrorField } from '../catalog.ts';
import type { DroppedRelations, WriteTx } from '../dialect-driver.ts';
import { MirrorError } from '../errors.ts';
import type { CursorWrites } from '../mirror.ts';
import { assertOpen } from '../mirror-context.ts';
import type { MirrorContext } from '../mirror-context.ts';
import { ID_COLUMN } from '../naming.ts';
import type { SchemaOp, SchemaPlan } from '../schema-planner.ts';
import { describeOp } from '../schema-planner.ts';
import { deleteFieldRows, insertTableRow, touchTableRow, updateTableRow, writeFieldRows } from './catalog-rows.ts';
import { writeCursors } from './cursors.ts';
import { restoreDerivedObjects, setAsideDerivedObjects } from './derived-objects.ts';
import { refuseChangesThatCreate } from './create-privilege.ts';
import { createSqlTable } from './create-sql-table.ts';
import { keepInsertedValues } from './keep-inserted-values.ts';
import { createReferenceIndex, dropReferenceIndex, referenceIndexSql } from './reference-indexes.ts';
import { absentTablesIn, readRevision } from './read-catalog.ts';
import { viewsDroppedBy, type ViewChanges } from './readable-views.ts';
import { lockChangedTables } from './schema-change-locks.ts';
import { schemaRefusal } from './schema-refusal.ts';
import { refuseUnreadableViews } from './users-views.ts';

/** Runs a plan from `planSchema`: DDL, catalog rows and the given cursors in ONE transaction. */
export async function applySchemaPlan(ctx: MirrorContext, plan: SchemaPlan, options: { cursors?: CursorWrites } = {}): Promise<void> {
  assertOpen(ctx);
  if (plan.dialect !== ctx.dialect.name) {
    throw new MirrorError(`a schema plan for ${plan.dialect} cannot be applied to a ${ctx.dialect.name} mirror`);
  }
  try {
    await ctx.driver.write(async (tx) => {
      const cat = ctx.driver.catalog(tx.db);
      const revision = await readRevision(cat);
      if (revision !== plan.baseRevision) {
        throw new MirrorError(
          `the schema plan was made from catalog revision ${plan.baseRevision} but the mirror is at ${revision}; plan again`,
        );
      }
      const touched = touchedTables(plan.ops);
      const changes = viewChangesOf(plan.ops);
      if (touched.size > 0) {
        await refuseChangesThatCreate(ctx, tx, touched, changes.droppedTables);
        await lockChangedTables(ctx, tx, touched, droppedBy(plan.ops, await viewsDroppedBy(ctx, tx, touched, changes)));
      }
      const setAside = touched.size > 0 ? await setAsideDerivedObjects(ctx, tx, touched, changes) : undefined;
      for (const step of inSteps(plan.ops)) {
        for (const op of step.ops) ctx.logger?.info({ op: op.op }, describeOp(op));
        try {
          await runStep(ctx, tx, step);
        } catch (error) {
          // The step's own table: SQLite's ALTER TABLE reads every view of the file again, but each
          // view of a user's that read before the change still reads here (readable-views.ts keeps
          // them so, refusing the change of the table that would not), unless it did not read already.
          throw schemaRefusal(ctx, tableOf(step.ops[0]!), error);
        }
        // SQLite drops a table whatever views of users' own read it (users-views.ts).
        if (step.ops[0]!.op === 'dropTable') await refuseUnreadableViews(ctx, tx, setAside!.unreadableBefore, tableOf(step.ops[0]!));
      }
      if (plan.ops.length > 0) {
        await restoreDerivedObjects(ctx, tx, setAside);
        await cat.updateTable('_wsmirror_meta').set({ value: String(revision + 1) }).where('key', '=', 'revision').execute();
      }
      writeCursors(ctx, tx, options.cursors);
    });
  } finally {
    // Reloaded on next use, whatever the outcome.
    ctx.tables = undefined;
  }
}

/** The table an op changes (DDL or catalog rows). */
function tableOf(op: SchemaOp): string {
  switch (op.op) {
    case 'createTable': case 'dropTable': case 'updateTable': return op.table.tableId;
    case 'renameTable': case 'renameColumn': return op.tableId;
    case 'addColumn': case 'dropColumn': case 'retypeColumn': case 'updateField': return op.field.tableId;
  }
}

/** The tables the ops change: their derived objects are made again. */
function touchedTables(ops: readonly SchemaOp[]): Set<string> {
  return new Set(ops.map(tableOf));
}

/** What the ops do that the readable views of the tables they touch must make way for (readable-views.ts). */
function viewChangesOf(ops: readonly SchemaOp[]): ViewChanges {
  const goingFields = new Set<string>();
  const droppedTables = new Set<string>();
  const viewNames = new Map<string, string>();
  for (const op of ops) {
    if (op.op === 'dropColumn' || (op.op === 'retypeColumn' && op.rebuild)) goingFields.add(op.field.fieldId);
    else if (op.op === 'dropTable') droppedTables.add(op.table.tableId);
    else if (op.op === 'updateTable' && op.table.viewName !== null) viewNames.set(op.table.tableId, op.table.viewName);
  }
  return { goingFields, droppedTables, viewNames };
}

/** What the ops' DDL drops of each table they touch: its view (`views`: those not made again in place), the table, columns. */
function droppedBy(ops: readonly SchemaOp[], views: ReadonlyMap<string, string>): Map<string, DroppedRelations> {
  const out = new Map<string, { relations: string[]; columns: { table: string; column: string }[] }>();
  const of = (tableId: string) => out.get(tableId) ?? out.set(tableId, { relations: [], columns: [] }).get(tableId)!;
  for (const [tableId, view] of views) of(tableId).relations.push(view);
  for (const op of ops) {
    if (op.op === 'dropTable') of(op.table.tableId).relations.push(op.table.sqlName);
    else if (op.op === 'dropColumn' || (op.op === 'retypeColumn' && op.rebuild)) of(op.field.tableId).columns.push({ table: op.sqlTable, column: op.field.columnName });
  }
  return out;
}

type AddColumnOp = Extract<SchemaOp, { op: 'addColumn' }>;
type OtherOp = Exclude<SchemaOp, AddColumnOp>;

/** What runs at once: one op, or the columns added to one table in a row (their statements travel together). */
type Step = { kind: 'addColumns'; ops: AddColumnOp[] } | { kind: 'op'; ops: [OtherOp] };

function inSteps(ops: readonly SchemaOp[]): Step[] {
  const steps: Step[] = [];
  for (const op of ops) {
    const last = steps[steps.length - 1];
    if (op.op !== 'addColumn') steps.push({ kind: 'op', ops: [op] });
    else if (last?.kind === 'addColumns' && last.ops[0]!.sqlTable === op.sqlTable) last.ops.push(op);
    else steps.push({ kind: 'addColumns', ops: [op] });
  }
  return steps;
}

async function runStep(ctx: MirrorContext, tx: WriteTx, step: Step): Promise<void> {
  if (step.kind === 'addColumns') {
    const first = step.ops[0]!;
    await addColumns(ctx, tx, first.sqlTable, step.ops.map((op) => op.field));
    await touchTableRow(ctx, tx, first.field.tableId);
    return;
  }
  const [op] = step.ops;
  await runOp(ctx, tx, op);
  const columnOf = op.op === 'renameColumn' ? op.tableId : op.op === 'dropColumn' || op.op === 'retypeColumn' ? op.field.tableId : undefined;
  if (columnOf !== undefined) await touchTableRow(ctx, tx, columnOf);
}

async function runOp(ctx: MirrorContext, tx: WriteTx, op: OtherOp): Promise<void> {
  const d = ctx.driver;
  const cat = d.catalog(tx.db);
  switch (op.op) {
    case 'createTable': {
      await createSqlTable(ctx, tx, op.table, op.fields);
      await insertTableRow(ctx, tx, op.table);
      await writeFieldRows(ctx, tx, op.table.sqlName, op.fields);
      // Its reference indexes come when its first full read ends (reference-indexes.ts).
      return;
    }
    case 'dropTable': {
      // A SQL table dropped outside wsmirror took its rows with it: nothing to keep.
      if ((await absentTablesIn(d, tx.db, [op.table])).length === 0) await keepInsertedValues(ctx, tx, op.table.tableId, op.table.sqlName);
      await sql`DROP TABLE IF EXISTS ${d.table(op.table.sqlName)}`.execute(tx.db);
      const id = op.table.tableId;
      await cat.deleteFrom('_wsmirror_tables').where('table_id', '=', id).execute();
      await cat.deleteFrom('_wsmirror_fields').where('table_id', '=', id).execute();
      await cat.deleteFrom('_wsmirror_choice_options').where('table_id', '=', id).execute();
      const prefix = tableCursorPrefix(id);
      // substr, not LIKE: ids may hold LIKE wildcards.
      await cat.deleteFrom('_wsmirror_cursors')
        .where(sql<boolean>`substr(${sql.ref('name')}, 1, ${prefix.length}) = ${prefix}`)
        .execute();
      return;
    }
    case 'renameTable':
      await sql`ALTER TABLE ${d.table(op.from)} RENAME TO ${sql.id(op.to)}`.execute(tx.db);
      // Local edits waiting in the outbox name the table as the mirror does.
      await cat.updateTable('_wsmirror_outbox').set({ sql_table: op.to }).where('table_id', '=', op.tableId).execute();
      return;
    case 'updateTable':
      await updateTableRow(ctx, tx, op.table);
      await d.comment(tx, [{ sqlTable: op.table.sqlName, column: null, text: op.table.label }]);
      return;
    case 'dropColumn':
      await dropReferenceIndex(ctx, tx, op.field);
      await sql`ALTER TABLE ${d.table(op.sqlTable)} DROP COLUMN ${sql.id(op.field.columnName)}`.execute(tx.db);
      await deleteFieldRows(ctx, tx, op.field.tableId, [op.field.fieldId]);
      return;
    case 'renameColumn':
      await sql`ALTER TABLE ${d.table(op.sqlTable)} RENAME COLUMN ${sql.id(op.from)} TO ${sql.id(op.to)}`.execute(tx.db);
      // Local edits of the field follow it (the push and the pull's protection of edited
      // columns find them by field id; the column name is what a reader of the outbox sees).
      await cat.updateTable('_wsmirror_outbox').set({ column_name: op.to })
        .where('table_id', '=', op.tableId).where('field_id', '=', op.fieldId).execute();
      return;
    case 'retypeColumn':
      if (op.rebuild) {
        // Old values would be wrong for the new type: drop them; the table is re-read. Local
        // edits waiting for the field were made for the old type: failed, kept for the operator.
        await cat.updateTable('_wsmirror_outbox')
          .set({
            status: 'failed',
            last_error: `${op.field.fieldName} changed type upstream (${op.previousType} to ${op.field.fieldType}) before this edit was sent; `
              + 'its value was not sent: set the value again in SQL, then discard this entry',
            next_attempt_at: null,
            sending_since: null,
          })
          .where('table_id', '=', op.field.tableId).where('field_id', '=', op.field.fieldId).where('status', '=', 'pending').execute();
        await holdBackClearedCreates(ctx, tx, op.sqlTable, op.field, op.previousType);
        await dropReferenceIndex(ctx, tx, op.field);
        await sql`ALTER TABLE ${d.table(op.sqlTable)} DROP COLUMN ${sql.id(op.field.columnName)}`.execute(tx.db);
        await sql`ALTER TABLE ${d.table(op.sqlTable)} ADD COLUMN ${sql.id(op.field.columnName)} ${sql.raw(op.field.sqlType)}`.execute(tx.db);
        await createReferenceIndex(ctx, tx, op.sqlTable, op.field);
      }
      await d.comment(tx, [{ sqlTable: op.sqlTable, column: op.field.columnName, text: op.field.label }]);
      await writeFieldRows(ctx, tx, op.sqlTable, [op.field]);
      return;
    case 'updateField':
      await d.comment(tx, [{ sqlTable: op.sqlTable, column: op.field.columnName, text: op.field.label }]);
      await writeFieldRows(ctx, tx, op.sqlTable, [op.field]);
      return;
  }
}

/**
 * Rows inserted here whose value of a column about to be rebuilt (its field retyped upstream)
 * the rebuild clears: their creates, not sent yet, are failed with the value they lose, rather
 * than going out without it. Set again and retried, they go with the new type's value. A create
 * whose send may have gone through (sending_since) is left to its read-back.
 */
async function holdBackClearedCreates(ctx: MirrorContext, tx: WriteTx, sqlTable: string, field: MirrorField, previousType: string): Promise<void> {
  const d = ctx.driver;
  const cat = d.catalog(tx.db);
  const column = sql.id(field.columnName);
  const rows = await sql<{ id: unknown; value: unknown }>`SELECT ${sql.id(ID_COLUMN)} AS id, ${column} AS value FROM ${d.table(sqlTable)}
    WHERE ${sql.id(ID_COLUMN)} < 0 AND ${column} IS NOT NULL`.execute(tx.db);
  for (const row of rows.rows) {
    const shown = JSON.stringify(row.value instanceof Date ? row.value.toISOString() : row.value) ?? String(row.value);
    await cat.updateTable('_wsmirror_outbox')
      .set({
        status: 'failed',
        last_error: `${field.fieldName} changed type upstream (${previousType} to ${field.fieldType}) before this row was created: its value `
          + `${shown.length > 200 ? `${shown.slice(0, 200)}…` : shown} was cleared with the column; set it again in SQL, then wsmirror outbox retry this entry`,
        next_attempt_at: null,
      })
      .where('table_id', '=', field.tableId).where('record_id', '=', Number(row.id)).where('operation', '=', 'insert')
      .where('status', '=', 'pending').where('sending_since', 'is', null).execute();
  }
}

/**
 * New columns of one table, with their comments, catalog rows and reference indexes: a few round
 * trips for all of them (Postgres runs the statements as one batch).
 */
async function addColumns(ctx: MirrorContext, tx: WriteTx, sqlTable: string, fields: readonly MirrorField[]): Promise<void> {
  const d = ctx.driver;
  await d.runScript(tx, [
    ...fields.map((f) => sql`ALTER TABLE ${d.table(sqlTable)} ADD COLUMN ${sql.id(f.columnName)} ${sql.raw(f.sqlType)}`.compile(tx.db).sql),
    ...fields.flatMap((f) => referenceIndexSql(ctx, tx, sqlTable, f)),
  ]);
  await d.comment(tx, fields.map((f) => ({ sqlTable, column: f.columnName, text: f.label })));
  await writeFieldRows(ctx, tx, sqlTable, fields);
}
