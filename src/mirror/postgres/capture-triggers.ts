import { ID_COLUMN, hash8 } from '../naming.ts';
import type { CaptureTable, SqlNames } from '../sql-text.ts';
import { ID_CHANGE_MESSAGE, quoteIdent, quoteLiteral, readOnlyMessage } from '../sql-text.ts';
import { SEARCH_PATH } from './search-path.ts';
import { daemonWriteCondition } from './writer-marker.ts';

/**
 * Postgres capture, per mirrored table: PL/pgSQL functions that name the table's columns, written
 * again around every schema change (operations/capture.ts), like SQLite's triggers.
 *
 * - UPDATE and DELETE are captured by statement triggers over the transition tables: one
 *   set-based INSERT … SELECT for a whole bulk UPDATE (old and new joined once, a row per changed
 *   column), not a function call per row;
 * - a row trigger fires only on a forbidden UPDATE (an `id` change, a read-only column changed:
 *   its WHEN clause filters every other row out at no cost) and raises the error naming it;
 * - INSERT: a row trigger refuses values in read-only columns and gives the row minus its new
 *   entry's id (unless the id given is one the table holds: see the function);
 * - TRUNCATE is refused (no row trigger would see it).
 * The daemon's own writes pass every trigger untouched: each trigger's WHEN clause leaves them
 * out. There, not in the functions: a WHEN clause runs as the editing role, a function that
 * writes the outbox as its owner, who would pass for the daemon (writer-marker.ts).
 */

function truncateMessage(sqlTable: string): string {
  return `wsmirror: TRUNCATE of ${sqlTable} is not captured, so upstream would keep its records; DELETE FROM the rows instead (each becomes a delete upstream)`;
}

/** Names of the capture functions (and of nothing else in the schema) begin with it. */
export const CAPTURE_PREFIX = '_wsmirror_capture_';

function objectNames(t: CaptureTable) {
  // Named after the upstream table id, so they survive table renames; 63-byte names fit.
  const base = `${CAPTURE_PREFIX}${hash8(t.tableId)}`;
  return {
    insert: { trigger: '_wsmirror_capture_insert', fn: `${base}_insert` },
    guard: { trigger: '_wsmirror_capture_guard', fn: `${base}_guard` },
    update: { trigger: '_wsmirror_capture_update', fn: `${base}_update` },
    delete: { trigger: '_wsmirror_capture_delete', fn: `${base}_delete` },
    truncate: { trigger: '_wsmirror_capture_truncate', fn: `${base}_truncate` },
  };
}

export function dropCaptureSql(names: SqlNames, t: CaptureTable): string[] {
  return Object.values(objectNames(t)).flatMap(({ trigger, fn }) => [
    `DROP TRIGGER IF EXISTS ${quoteIdent(trigger)} ON ${names.qualify(t.sqlName)}`,
    `DROP FUNCTION IF EXISTS ${names.qualify(fn)}()`,
  ]);
}

/** CREATE FUNCTION with a dollar-quote tag that the body (which holds upstream names) does not contain. */
function createFunction(qualifiedName: string, body: string, settings = ''): string {
  let tag = '$capture$';
  for (let i = 0; body.includes(tag); i++) tag = `$capture${i}$`;
  return `CREATE OR REPLACE FUNCTION ${qualifiedName}() RETURNS trigger LANGUAGE plpgsql ${settings} AS ${tag}${body}${tag}`;
}

/**
 * Functions are executable by PUBLIC when created: any role could then hang one on a table of
 * its own (a temporary table whose transition table is called `_wsmirror_old`) and, as the
 * functions write the outbox as the daemon, have deletes and updates of any record pushed with
 * its API key. Only the owner keeps EXECUTE; the triggers it creates fire them for every role
 * (EXECUTE is checked when a trigger is created, not when it fires).
 */
function ownerOnly(qualifiedName: string): string {
  return `REVOKE ALL ON FUNCTION ${qualifiedName}() FROM PUBLIC`;
}

/**
 * The text of a captured value (to_jsonb of a tstzrange or timestamptz) follows the editing
 * session's settings: the capture of updates fixes them, so the push reads one form.
 */
const VALUE_TEXT_SETTINGS = `SET TimeZone TO 'UTC' SET DateStyle TO 'ISO, YMD'`;

/**
 * Every function runs on a fixed search path (search-path.ts): nothing the editing role, or a
 * role with CREATE on a schema of its path, created can stand in for a function or operator the
 * body calls. Every name of the mirror's in them is schema-qualified.
 */
const FIXED_PATH = `SET search_path = ${SEARCH_PATH}`;

/**
 * The functions that write the outbox run as their owner, the daemon's role: an editing role
 * needs rights on the tables it edits and none on the outbox, so it cannot write entries of its
 * own (the daemon would push them with its API key).
 */
const OUTBOX_WRITER = `SECURITY DEFINER ${FIXED_PATH}`;

/** How the functions that write the outbox begin the test of their own table, which they name. */
export const OWN_TABLE_TEST = 'TG_RELID <> ';

/** That test in a function made for a table of `schema`, up to the schema's name (capture-schema.ts). */
export function ownTableTestIn(schema: string): string {
  return `${OWN_TABLE_TEST}${quoteLiteral(`${quoteIdent(schema)}.`).slice(0, -1)}`;
}

export function createCaptureSql(names: SqlNames, t: CaptureTable): string[] {
  const n = objectNames(t);
  const notDaemon = `NOT (${daemonWriteCondition(names)})`;
  const table = names.qualify(t.sqlName);
  const outbox = names.qualify('_wsmirror_outbox');
  const id = quoteIdent(ID_COLUMN);
  const tableId = quoteLiteral(t.tableId);
  const sqlTable = quoteLiteral(t.sqlName);
  const raise = (message: string) => `RAISE EXCEPTION USING ERRCODE = 'check_violation', MESSAGE = ${quoteLiteral(message)};`;
  const readOnly = t.fields.filter((f) => f.readOnly);
  const writable = t.fields.filter((f) => !f.readOnly);
  const changed = (c: string) => `NEW.${c} IS DISTINCT FROM OLD.${c}`;
  // The functions that write the outbox serve their own table only (see ownerOnly).
  const ownTable = `  IF ${OWN_TABLE_TEST}${quoteLiteral(table)}::regclass THEN RAISE EXCEPTION USING ERRCODE = 'insufficient_privilege', `
    + `MESSAGE = ${quoteLiteral(`wsmirror: this capture function serves ${t.sqlName} only`)}; END IF;`;
  const out: string[] = [];

  out.push(createFunction(names.qualify(n.insert.fn), `
DECLARE
  entry bigint;
BEGIN
${ownTable}
  ${readOnly.map((f) => `IF NEW.${quoteIdent(f.columnName)} IS NOT NULL THEN ${raise(readOnlyMessage(t.sqlName, f.columnName))} END IF;`).join('\n  ')}
  -- An id the table holds names that row, as on SQLite (whose capture runs after the insert):
  -- a plain INSERT then fails on the key, and ON CONFLICT updates the row (captured as an
  -- update) or does nothing; with a temporary id it made a new record upstream every time.
  IF NEW.${id} IS NOT NULL AND EXISTS (SELECT 1 FROM ${table} WHERE ${id} = NEW.${id}) THEN RETURN NEW; END IF;
  entry := nextval(pg_get_serial_sequence(${quoteLiteral(outbox)}, 'entry_id'));
  NEW.${id} := -entry;
  INSERT INTO ${outbox} (entry_id, table_id, sql_table, record_id, operation) VALUES (entry, ${tableId}, ${sqlTable}, -entry, 'insert');
  RETURN NEW;
END`, OUTBOX_WRITER));
  // The WHEN clause keeps the daemon's own inserts (a backfill's COPY) from calling the function
  // at all: a PL/pgSQL call per row cost a third of a plain insert.
  out.push(ownerOnly(names.qualify(n.insert.fn)));
  out.push(`CREATE TRIGGER ${quoteIdent(n.insert.trigger)} BEFORE INSERT ON ${table} FOR EACH ROW
    WHEN (${notDaemon}) EXECUTE FUNCTION ${names.qualify(n.insert.fn)}()`);

  const forbidden = [changed(id), ...readOnly.map((f) => changed(quoteIdent(f.columnName)))];
  out.push(createFunction(names.qualify(n.guard.fn), `
BEGIN
  IF ${changed(id)} THEN ${raise(`${ID_CHANGE_MESSAGE} (${t.sqlName})`)} END IF;
  ${readOnly.map((f) => `IF ${changed(quoteIdent(f.columnName))} THEN ${raise(readOnlyMessage(t.sqlName, f.columnName))} END IF;`).join('\n  ')}
  RETURN NEW;
END`, FIXED_PATH));
  out.push(ownerOnly(names.qualify(n.guard.fn)));
  out.push(`CREATE TRIGGER ${quoteIdent(n.guard.trigger)} BEFORE UPDATE ON ${table} FOR EACH ROW
    WHEN (${notDaemon} AND (${forbidden.join(' OR ')})) EXECUTE FUNCTION ${names.qualify(n.guard.fn)}()`);

  // One pass over the transition tables for every column: a row per changed column comes out
  // of a LATERAL list of (column, changed?), so a bulk UPDATE joins old and new once; the values
  // are turned into JSON after the filter, only for the columns that changed (before, every
  // column's old and new value was, which made a wide table's one-column UPDATE several times slower).
  const columnsList = writable.map((f, position) => {
    const c = quoteIdent(f.columnName);
    return `(${position}, ${quoteLiteral(f.columnName)}, ${quoteLiteral(f.fieldId)}, n.${c} IS DISTINCT FROM o.${c})`;
  });
  const valueOf = (row: 'o' | 'n') =>
    `CASE c.position ${writable.map((f, position) => `WHEN ${position} THEN to_jsonb(${row}.${quoteIdent(f.columnName)})`).join(' ')} END`;
  out.push(createFunction(names.qualify(n.update.fn), `
BEGIN
${ownTable}
  ${writable.length === 0 ? '' : `INSERT INTO ${outbox} (table_id, sql_table, record_id, operation, column_name, field_id, old_value, new_value)
    SELECT ${tableId}, ${sqlTable}, n.${id}, 'update', c.column_name, c.field_id, ${valueOf('o')}, ${valueOf('n')}
    FROM _wsmirror_new n JOIN _wsmirror_old o ON o.${id} = n.${id}
    CROSS JOIN LATERAL (VALUES ${columnsList.join(', ')}) AS c(position, column_name, field_id, changed)
    WHERE c.changed ORDER BY n.${id}, c.position;`}
  RETURN NULL;
END`, `${OUTBOX_WRITER} ${VALUE_TEXT_SETTINGS}`));
  out.push(ownerOnly(names.qualify(n.update.fn)));
  out.push(`CREATE TRIGGER ${quoteIdent(n.update.trigger)} AFTER UPDATE ON ${table}
    REFERENCING OLD TABLE AS _wsmirror_old NEW TABLE AS _wsmirror_new FOR EACH STATEMENT
    WHEN (${notDaemon}) EXECUTE FUNCTION ${names.qualify(n.update.fn)}()`);

  out.push(createFunction(names.qualify(n.delete.fn), `
BEGIN
${ownTable}
  INSERT INTO ${outbox} (table_id, sql_table, record_id, operation)
    SELECT ${tableId}, ${sqlTable}, o.${id}, 'delete' FROM _wsmirror_old o ORDER BY o.${id};
  RETURN NULL;
END`, OUTBOX_WRITER));
  out.push(ownerOnly(names.qualify(n.delete.fn)));
  out.push(`CREATE TRIGGER ${quoteIdent(n.delete.trigger)} AFTER DELETE ON ${table}
    REFERENCING OLD TABLE AS _wsmirror_old FOR EACH STATEMENT WHEN (${notDaemon}) EXECUTE FUNCTION ${names.qualify(n.delete.fn)}()`);

  // TRUNCATE fires no row or DELETE trigger: captured it would be nothing, and a table with
  // history would stay empty (only changes are pulled). Refused, naming what to run instead.
  out.push(createFunction(names.qualify(n.truncate.fn), `
BEGIN
  RAISE EXCEPTION USING ERRCODE = 'feature_not_supported', MESSAGE = ${quoteLiteral(truncateMessage(t.sqlName))};
END`, FIXED_PATH));
  out.push(ownerOnly(names.qualify(n.truncate.fn)));
  out.push(`CREATE TRIGGER ${quoteIdent(n.truncate.trigger)} BEFORE TRUNCATE ON ${table}
    FOR EACH STATEMENT WHEN (${notDaemon}) EXECUTE FUNCTION ${names.qualify(n.truncate.fn)}()`);
  return out;
}
