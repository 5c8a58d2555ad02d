import { ID_COLUMN, hash8 } from '../naming.ts';
import type { CaptureTable, SqlNames } from '../sql-text.ts';
import { ID_CHANGE_MESSAGE, quoteIdent, quoteLiteral, readOnlyMessage } from '../sql-text.ts';
import { DAEMON_WRITE_CONDITION } from './writer-marker.ts';

/**
 * SQLite capture triggers of a mirrored table. They name its columns, and SQLite refuses to
 * drop or rename a column a trigger names: they are dropped before every schema change and
 * created again after it (operations/capture.ts).
 *
 * - BEFORE INSERT / UPDATE: refuse writes to read-only columns and changes of `id`;
 * - AFTER INSERT: one `insert` entry; the row's id becomes minus the entry's id (temporary, never
 *   an upstream id, which are positive);
 * - AFTER UPDATE OF a writable column, one trigger per column: an `update` entry with old and new
 *   value as JSON when the value changed. SQLite runs only the triggers of the columns an UPDATE
 *   sets, so a one-column UPDATE of a wide table does not test every other column for each row
 *   (one trigger for all columns made such an UPDATE about twice as slow on 20 columns);
 * - AFTER DELETE: one `delete` entry.
 */
const OUTBOX = quoteIdent('_wsmirror_outbox');

/**
 * A captured value as JSON text. The trigger runs in the editing client's SQLite, whatever its
 * version: before 3.43 `json_quote` wrote a REAL with 15 significant digits (0.30000000000000004
 * became 0.3, so the push sent another number and saw a conflict where there was none) and an
 * infinity as `Inf`, which is no JSON. A REAL is written with 17 digits, which any double
 * survives, and an infinity as the text the push refuses with a message.
 */
function jsonOf(value: string): string {
  return `CASE WHEN typeof(${value}) = 'real' THEN CASE WHEN ${value} = 9e999 THEN '"Infinity"' WHEN ${value} = -9e999 THEN '"-Infinity"' `
    + `ELSE printf('%!.17g', ${value}) END ELSE json_quote(${value}) END`;
}
const ID = quoteIdent(ID_COLUMN);

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
  if (readOnly.length > 0) {
    out.push(`CREATE TRIGGER ${quoteIdent(n.guardInsert)} BEFORE INSERT ON ${table} WHEN ${when} BEGIN
      ${readOnly.map((f) => refuse(`NEW.${quoteIdent(f.columnName)} IS NOT NULL`, readOnlyMessage(t.sqlName, f.columnName))).join('\n      ')}
    END`);
  }
  // The id change the insert trigger makes itself is the one allowed: its entry already holds the new id.
  const ownIdChange = `EXISTS (SELECT 1 FROM ${OUTBOX} WHERE "table_id" = ${tableId} AND "record_id" = NEW.${ID} AND "operation" = 'insert')`;
  out.push(`CREATE TRIGGER ${quoteIdent(n.guardUpdate)} BEFORE UPDATE ON ${table} WHEN ${when} BEGIN
      ${refuse(`NEW.${ID} IS NOT OLD.${ID} AND NOT ${ownIdChange}`, `${ID_CHANGE_MESSAGE} (${t.sqlName})`)}
      ${readOnly.map((f) => refuse(`NEW.${quoteIdent(f.columnName)} IS NOT OLD.${quoteIdent(f.columnName)}`, readOnlyMessage(t.sqlName, f.columnName))).join('\n      ')}
    END`);
  out.push(`CREATE TRIGGER ${quoteIdent(n.insert)} AFTER INSERT ON ${table} WHEN ${when} BEGIN
      INSERT INTO ${OUTBOX} ("table_id", "sql_table", "operation") VALUES (${tableId}, ${sqlTable}, 'insert');
      UPDATE ${OUTBOX} SET "record_id" = -"entry_id" WHERE "entry_id" = last_insert_rowid();
      UPDATE ${table} SET ${ID} = -last_insert_rowid() WHERE ${ID} = NEW.${ID};
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
