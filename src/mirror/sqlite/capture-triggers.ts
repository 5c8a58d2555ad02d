import { ID_COLUMN } from '../naming.ts';
import type { CaptureTable, SqlNames } from '../sql-text.ts';
import { ID_CHANGE_MESSAGE, quoteIdent, quoteLiteral, readOnlyMessage } from '../sql-text.ts';
import { DAEMON_WRITE_CONDITION } from './writer-marker.ts';

/**
 * SQLite capture triggers, four per mirrored table. They name every column, and SQLite refuses
 * to drop or rename a column a trigger names: they are dropped before every schema change and
 * created again after it (operations/capture.ts).
 *
 * - BEFORE INSERT / UPDATE: refuse writes to read-only columns and changes of `id`;
 * - AFTER INSERT: one `insert` entry; the row's id becomes minus the entry's id (temporary, never
 *   an upstream id, which are positive);
 * - AFTER UPDATE: one `update` entry per changed writable column, old and new value as JSON;
 * - AFTER DELETE: one `delete` entry.
 */
const OUTBOX = quoteIdent('_wsmirror_outbox');
const ID = quoteIdent(ID_COLUMN);

function triggerNames(t: CaptureTable) {
  const base = `_wsmirror_capture_${t.sqlName}`;
  return { guardInsert: `${base}_gi`, guardUpdate: `${base}_gu`, insert: `${base}_i`, update: `${base}_u`, delete: `${base}_d` };
}

export function dropCaptureSql(_names: SqlNames, t: CaptureTable): string[] {
  return Object.values(triggerNames(t)).map((n) => `DROP TRIGGER IF EXISTS ${quoteIdent(n)}`);
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
  if (writable.length > 0) {
    const entries = writable.map((f) => {
      const c = quoteIdent(f.columnName);
      return `INSERT INTO ${OUTBOX} ("table_id", "sql_table", "record_id", "operation", "column_name", "field_id", "old_value", "new_value")
        SELECT ${tableId}, ${sqlTable}, NEW.${ID}, 'update', ${quoteLiteral(f.columnName)}, ${quoteLiteral(f.fieldId)}, json_quote(OLD.${c}), json_quote(NEW.${c})
        WHERE NEW.${c} IS NOT OLD.${c};`;
    });
    out.push(`CREATE TRIGGER ${quoteIdent(n.update)} AFTER UPDATE ON ${table} WHEN ${when} AND NEW.${ID} IS OLD.${ID} BEGIN
      ${entries.join('\n      ')}
    END`);
  }
  out.push(`CREATE TRIGGER ${quoteIdent(n.delete)} AFTER DELETE ON ${table} WHEN ${when} BEGIN
      INSERT INTO ${OUTBOX} ("table_id", "sql_table", "record_id", "operation") VALUES (${tableId}, ${sqlTable}, OLD.${ID}, 'delete');
    END`);
  return out;
}
