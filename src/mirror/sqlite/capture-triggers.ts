import { ID_COLUMN, SYNCED_AT_COLUMN, hash8 } from '../naming.ts';
import type { CaptureTable, SqlNames } from '../sql-text.ts';
import { CAPTURED_BLOB_KEY, ID_CHANGE_MESSAGE, quoteIdent, quoteLiteral, readOnlyMessage } from '../sql-text.ts';
import type { CatalogTableDef } from '../catalog-tables.ts';
import { jsonArraySql } from './json-array.ts';
import { DAEMON_WRITE_CONDITION } from './writer-marker.ts';

/**
 * SQLite capture triggers of a mirrored table. They name its columns, and SQLite refuses to
 * drop or rename a column a trigger names: they are dropped before every schema change and
 * created again after it (operations/capture.ts).
 *
 * - BEFORE INSERT / UPDATE: refuse writes to read-only columns and changes of `id`;
 * - BEFORE INSERT: keep the values of the row the INSERT names by id, if the table has it (see
 *   REPLACED_TABLE);
 * - AFTER INSERT: one `insert` entry; the row's id becomes minus the entry's id (temporary, never
 *   an upstream id, which are positive). A row that took the place of the one it named (REPLACE)
 *   keeps its id and `_synced_at` and is captured as an update of that row instead;
 * - AFTER UPDATE OF a writable column, one trigger per column: an `update` entry with old and new
 *   value as JSON when the value changed. SQLite runs only the triggers of the columns an UPDATE
 *   sets, so a one-column UPDATE of a wide table does not test every other column for each row
 *   (one trigger for all columns made such an UPDATE about twice as slow on 20 columns);
 * - AFTER DELETE: one `delete` entry.
 */
const OUTBOX = quoteIdent('_wsmirror_outbox');

/**
 * `REPLACE INTO` (or `INSERT OR REPLACE`) naming a row's id deletes that row without running its
 * delete triggers (unless the client set `recursive_triggers`) and inserts the new one. Only a
 * BEFORE INSERT trigger still sees the old row, and it cannot tell a REPLACE from an upsert or
 * an OR IGNORE (which run it too, and no AFTER INSERT): it keeps the old row's values here, one
 * row per table, and the AFTER INSERT trigger that finds them for its row knows the row took the
 * place of another and captures the change as an update of it, as Postgres does with ON CONFLICT.
 * Each INSERT starts by clearing its table's row, so one an upsert or an earlier INSERT left
 * behind is never read; both AFTER INSERT triggers leave it, so neither depends on their order.
 * The old row's `_synced_at` follows its values: a local edit does not change when wsmirror last
 * wrote the row, and a resumed scan finds the rows it has not written by it (sync/table-scan.ts).
 */
export const REPLACED_TABLE = '_wsmirror_replaced';

export const REPLACED_TABLE_DEF: CatalogTableDef = {
  name: REPLACED_TABLE,
  comment: 'wsmirror: the row a local INSERT names by id, while SQLite inserts it (REPLACE becomes an update)',
  columns: [
    { name: 'table_id', kind: 'text', notNull: true, comment: 'upstream table id' },
    { name: 'record_id', kind: 'bigint', notNull: true, comment: 'id the INSERT names' },
    { name: 'old_values', kind: 'json', notNull: true, comment: 'the row\'s writable values, each as captured JSON text, in column order, then its _synced_at' },
    { name: 'last_entry_id', kind: 'bigint', comment: 'last outbox entry before the INSERT' },
  ],
  primaryKey: ['table_id'],
};
const REPLACED = quoteIdent(REPLACED_TABLE);

/**
 * A captured value as JSON text. The trigger runs in the editing client's SQLite, whatever its
 * version: before 3.43 `json_quote` wrote a REAL with 15 significant digits (0.30000000000000004
 * became 0.3, so the push sent another number and saw a conflict where there was none) and an
 * infinity as `Inf`, which is no JSON. A REAL is written with 17 digits, which any double
 * survives, and an infinity as the text the push refuses with a message.
 */
function jsonOf(value: string): string {
  // Simple CASEs: each names the value once, which keeps the parsed trigger small (SQLite holds
  // every trigger of the file parsed in each connection).
  return `CASE typeof(${value}) WHEN 'real' THEN CASE ${value} WHEN 9e999 THEN '"Infinity"' WHEN -9e999 THEN '"-Infinity"' `
    + `ELSE printf('%!.17g', ${value}) END WHEN 'blob' THEN ${BLOB_JSON(value)} ELSE json_quote(${value}) END`;
}

/**
 * JSON cannot hold a BLOB (`json_quote` fails on one, which made every later edit of its column
 * fail in the trigger): it is captured as an object the push refuses, naming the column.
 */
const BLOB_JSON = (value: string) => `json_object(${quoteLiteral(CAPTURED_BLOB_KEY)}, hex(${value}))`;
const ID = quoteIdent(ID_COLUMN);
const SYNCED_AT = quoteIdent(SYNCED_AT_COLUMN);

function triggerNames(t: CaptureTable) {
  const base = `_wsmirror_capture_${t.sqlName}`;
  return {
    guardInsert: `${base}_gi`, guardUpdate: `${base}_gu`, insert: `${base}_i`, delete: `${base}_d`,
    /** Per field, by its upstream id: stable across renames and reordering. */
    update: (fieldId: string) => `${base}_u_${hash8(fieldId)}`,
    /** The one update trigger of capture version 2 and older. */
    legacyUpdate: `${base}_u`,
  };
}

export function dropCaptureSql(_names: SqlNames, t: CaptureTable): string[] {
  const n = triggerNames(t);
  const names = [n.guardInsert, n.guardUpdate, n.insert, n.delete, n.legacyUpdate, ...t.fields.map((f) => n.update(f.fieldId))];
  return names.map((name) => `DROP TRIGGER IF EXISTS ${quoteIdent(name)}`);
}

export function createCaptureSql(names: SqlNames, t: CaptureTable): string[] {
  const n = triggerNames(t);
  const table = names.qualify(t.sqlName);
  const when = `NOT (${DAEMON_WRITE_CONDITION})`;
  const tableId = quoteLiteral(t.tableId);
  const sqlTable = quoteLiteral(t.sqlName);
  const readOnly = t.fields.filter((f) => f.readOnly);
  const writable = t.fields.filter((f) => !f.readOnly);
  const refuse = (condition: string, message: string) => `SELECT RAISE(ABORT, ${quoteLiteral(message)}) WHERE ${condition};`;
  const out: string[] = [];
  // The id change the insert trigger makes itself is the one allowed: its entry, the outbox's
  // last insert, already holds the new id (an older insert entry's id, its row gone, is refused).
  const ownIdChange = `NEW.${ID} = -last_insert_rowid() AND EXISTS (SELECT 1 FROM ${OUTBOX} WHERE "entry_id" = last_insert_rowid() `
    + `AND "table_id" = ${tableId} AND "record_id" = NEW.${ID} AND "operation" = 'insert')`;
  out.push(`CREATE TRIGGER ${quoteIdent(n.guardUpdate)} BEFORE UPDATE ON ${table} WHEN ${when} BEGIN
      ${refuse(`NEW.${ID} IS NOT OLD.${ID} AND NOT (${ownIdChange})`, `${ID_CHANGE_MESSAGE} (${t.sqlName})`)}
      ${readOnly.map((f) => refuse(`NEW.${quoteIdent(f.columnName)} IS NOT OLD.${quoteIdent(f.columnName)}`, readOnlyMessage(t.sqlName, f.columnName))).join('\n      ')}
    END`);
  // One BEFORE and one AFTER INSERT trigger, each with the statements of every case in its body:
  // the daemon's own inserts (every row of a pull) then pay one WHEN each, not one per case.
  out.push(`CREATE TRIGGER ${quoteIdent(n.guardInsert)} BEFORE INSERT ON ${table} WHEN ${when} BEGIN
      ${readOnly.map((f) => refuse(`NEW.${quoteIdent(f.columnName)} IS NOT NULL`, readOnlyMessage(t.sqlName, f.columnName))).join('\n      ')}
      DELETE FROM ${REPLACED} WHERE "table_id" = ${tableId};
      INSERT INTO ${REPLACED} ("table_id", "record_id", "old_values", "last_entry_id")
        SELECT ${tableId}, ${ID}, ${jsonArraySql([...writable.map((f) => `'' || ${jsonOf(quoteIdent(f.columnName))}`), SYNCED_AT])}, (SELECT max("entry_id") FROM ${OUTBOX})
        FROM ${table} WHERE NEW.${ID} IS NOT NULL AND ${ID} = NEW.${ID};
    END`);
  const replaced = `(SELECT "old_values" FROM ${REPLACED} WHERE "table_id" = ${tableId} AND "record_id" = NEW.${ID})`;
  // A row that took the place of the one it named: its changed columns are updates of that row,
  // and the delete entry recursive_triggers made of the old row goes (the row is still there).
  // One statement for all columns, over the new values as [column, field id, captured value]
  // arrays, each compared with the old value of the same position: written per column, the
  // statements made the trigger the largest object of the schema (about 70 KiB a table of 4).
  const newValues = jsonArraySql(writable.map((f) =>
    `json_array(${quoteLiteral(f.columnName)}, ${quoteLiteral(f.fieldId)}, '' || ${jsonOf(`NEW.${quoteIdent(f.columnName)}`)})`));
  const oldValue = `json_extract(r."old_values", '$[' || n."key" || ']')`;
  const replacedUpdates = writable.length === 0 ? '' : `INSERT INTO ${OUTBOX} ("table_id", "sql_table", "record_id", "operation", "column_name", "field_id", "old_value", "new_value")
        SELECT ${tableId}, ${sqlTable}, NEW.${ID}, 'update', json_extract(n."value", '$[0]'), json_extract(n."value", '$[1]'), ${oldValue}, json_extract(n."value", '$[2]')
        FROM ${REPLACED} AS r CROSS JOIN json_each(${newValues}) AS n
        WHERE r."table_id" = ${tableId} AND r."record_id" = NEW.${ID} AND ${oldValue} IS NOT json_extract(n."value", '$[2]');`;
  // It keeps that row's `_synced_at` too, unless the INSERT names one (as an UPDATE may set it).
  const replacedSyncedAt = `json_extract(${replaced}, '$[${writable.length}]')`;
  // Otherwise a new row: its insert entry, whose id (minus) the row takes. The entry is the
  // outbox's last insert only on this path: the id change is made by the entry, not by rowid alone.
  // The delete entries' bound names the row too: with no row replaced it is NULL, and none goes.
  out.push(`CREATE TRIGGER ${quoteIdent(n.insert)} AFTER INSERT ON ${table} WHEN ${when} BEGIN
      INSERT INTO ${OUTBOX} ("table_id", "sql_table", "operation") SELECT ${tableId}, ${sqlTable}, 'insert' WHERE NOT EXISTS ${replaced};
      UPDATE ${OUTBOX} SET "record_id" = -"entry_id" WHERE "entry_id" = last_insert_rowid() AND "operation" = 'insert' AND "record_id" IS NULL;
      UPDATE ${table} SET ${ID} = -last_insert_rowid() WHERE ${ID} = NEW.${ID} AND NOT EXISTS ${replaced};
      DELETE FROM ${OUTBOX} WHERE "table_id" = ${tableId} AND "record_id" = NEW.${ID} AND "operation" = 'delete'
        AND "entry_id" > (SELECT coalesce("last_entry_id", 0) FROM ${REPLACED} WHERE "table_id" = ${tableId} AND "record_id" = NEW.${ID});
      ${replacedUpdates}
      UPDATE ${table} SET ${SYNCED_AT} = ${replacedSyncedAt} WHERE ${ID} = NEW.${ID} AND NEW.${SYNCED_AT} IS NULL AND ${replacedSyncedAt} IS NOT NULL;
    END`);
  // SQLite runs the triggers of one event newest first: created last to first, a row's entries
  // come in column order (test/mirror/capture.test.ts holds it).
  for (const f of writable.toReversed()) {
    const c = quoteIdent(f.columnName);
    out.push(`CREATE TRIGGER ${quoteIdent(n.update(f.fieldId))} AFTER UPDATE OF ${c} ON ${table}
      WHEN ${when} AND NEW.${ID} IS OLD.${ID} AND NEW.${c} IS NOT OLD.${c} BEGIN
      INSERT INTO ${OUTBOX} ("table_id", "sql_table", "record_id", "operation", "column_name", "field_id", "old_value", "new_value")
        VALUES (${tableId}, ${sqlTable}, NEW.${ID}, 'update', ${quoteLiteral(f.columnName)}, ${quoteLiteral(f.fieldId)}, ${jsonOf(`OLD.${c}`)}, ${jsonOf(`NEW.${c}`)});
    END`);
  }
  out.push(`CREATE TRIGGER ${quoteIdent(n.delete)} AFTER DELETE ON ${table} WHEN ${when} BEGIN
      INSERT INTO ${OUTBOX} ("table_id", "sql_table", "record_id", "operation") VALUES (${tableId}, ${sqlTable}, OLD.${ID}, 'delete');
    END`);
  return out;
}
