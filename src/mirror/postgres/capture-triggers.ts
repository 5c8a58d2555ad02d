import { ID_COLUMN } from '../naming.ts';
import type { CaptureTable, SqlNames } from '../sql-text.ts';
import { ID_CHANGE_MESSAGE, READ_ONLY_TEMPLATE, quoteIdent, quoteLiteral } from '../sql-text.ts';
import { DAEMON_WRITE_CONDITION } from './writer-marker.ts';

/**
 * Postgres capture: one PL/pgSQL function per mirror schema, and one BEFORE row trigger per
 * mirrored table that passes the table's upstream id. The function reads the columns from the
 * catalog (`_wsmirror_fields`) and compares rows as jsonb, so it names no column and survives
 * every schema change; the triggers follow their tables through renames.
 *
 * - INSERT: read-only columns must be empty; the row's id becomes minus the new entry's id;
 * - UPDATE: `id` cannot change; read-only columns refuse; one entry per changed column;
 * - DELETE: one entry.
 */
const FUNCTION = '_wsmirror_capture';
const TRIGGER = '_wsmirror_capture';

export function captureSetupSql(names: SqlNames): string[] {
  const outbox = names.qualify('_wsmirror_outbox');
  const fields = names.qualify('_wsmirror_fields');
  const id = quoteIdent(ID_COLUMN);
  const readOnly = `format(${quoteLiteral(READ_ONLY_TEMPLATE)}, f.column_name, TG_TABLE_NAME)`;
  return [`CREATE OR REPLACE FUNCTION ${names.qualify(FUNCTION)}() RETURNS trigger LANGUAGE plpgsql AS $capture$
DECLARE
  old_j jsonb;
  new_j jsonb;
  f record;
  entry bigint;
BEGIN
  IF ${DAEMON_WRITE_CONDITION} THEN
    IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;
    RETURN NEW;
  END IF;
  IF TG_OP = 'INSERT' THEN
    new_j := to_jsonb(NEW);
    FOR f IN SELECT column_name FROM ${fields} WHERE table_id = TG_ARGV[0] AND is_read_only LOOP
      IF coalesce(new_j -> f.column_name, 'null'::jsonb) <> 'null'::jsonb THEN
        RAISE EXCEPTION USING ERRCODE = 'check_violation', MESSAGE = ${readOnly};
      END IF;
    END LOOP;
    entry := nextval(pg_get_serial_sequence(${quoteLiteral(outbox)}, 'entry_id'));
    NEW.${id} := -entry;
    INSERT INTO ${outbox} (entry_id, table_id, sql_table, record_id, operation) VALUES (entry, TG_ARGV[0], TG_TABLE_NAME, -entry, 'insert');
    RETURN NEW;
  ELSIF TG_OP = 'UPDATE' THEN
    IF NEW.${id} IS DISTINCT FROM OLD.${id} THEN
      RAISE EXCEPTION USING ERRCODE = 'check_violation', MESSAGE = ${quoteLiteral(`${ID_CHANGE_MESSAGE} (`)} || TG_TABLE_NAME || ')';
    END IF;
    old_j := to_jsonb(OLD);
    new_j := to_jsonb(NEW);
    IF old_j = new_j THEN RETURN NEW; END IF;
    FOR f IN SELECT field_id, column_name, is_read_only FROM ${fields} WHERE table_id = TG_ARGV[0] LOOP
      IF (new_j -> f.column_name) IS DISTINCT FROM (old_j -> f.column_name) THEN
        IF f.is_read_only THEN
          RAISE EXCEPTION USING ERRCODE = 'check_violation', MESSAGE = ${readOnly};
        END IF;
        INSERT INTO ${outbox} (table_id, sql_table, record_id, operation, column_name, field_id, old_value, new_value)
          VALUES (TG_ARGV[0], TG_TABLE_NAME, OLD.${id}, 'update', f.column_name, f.field_id, old_j -> f.column_name, new_j -> f.column_name);
      END IF;
    END LOOP;
    RETURN NEW;
  END IF;
  INSERT INTO ${outbox} (table_id, sql_table, record_id, operation) VALUES (TG_ARGV[0], TG_TABLE_NAME, OLD.${id}, 'delete');
  RETURN OLD;
END
$capture$`];
}

export function dropCaptureSql(names: SqlNames, t: CaptureTable): string[] {
  return [`DROP TRIGGER IF EXISTS ${quoteIdent(TRIGGER)} ON ${names.qualify(t.sqlName)}`];
}

export function createCaptureSql(names: SqlNames, t: CaptureTable): string[] {
  return [`CREATE TRIGGER ${quoteIdent(TRIGGER)} BEFORE INSERT OR UPDATE OR DELETE ON ${names.qualify(t.sqlName)}
    FOR EACH ROW EXECUTE FUNCTION ${names.qualify(FUNCTION)}(${quoteLiteral(t.tableId)})`];
}
