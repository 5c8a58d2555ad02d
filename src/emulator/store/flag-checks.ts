import { isReadOnlyType } from '../../api/index.ts';
import type { EmulatorContext } from '../context.ts';
import { BadRequestError } from '../errors.ts';
import { allowsRole, tableRoleRefusal } from './table-roles.ts';
import type { FieldProps, FieldRow, TableRow } from './schema-rows.ts';

/**
 * A field that becomes `unique` or `required` must already hold for the records the table has:
 * otherwise the update is 400 (naming a few records at fault) and nothing changes. Fields that
 * were unique or required before are not checked again.
 */

const SHOWN = 5;

/** Stored values are JSON; empty ones (absent, null, "", []) may repeat and do not count as given. */
function valueOf(field: FieldRow): string {
  return `json_extract(data, '$.${field.id}')`;
}

function emptyTest(field: FieldRow): string {
  const v = valueOf(field);
  return `(${v} IS NULL OR ${v} = '' OR (json_type(data, '$.${field.id}') = 'array' AND json_array_length(data, '$.${field.id}') = 0))`;
}

export function checkNewFlags(ctx: EmulatorContext, table: TableRow, field: FieldRow, props: FieldProps, where: string, role: string): void {
  if (!/^f[0-9]+$/.test(field.id) || isReadOnlyType(field.type)) return;
  // Records and values are named only to a role that reads the field in every record: a role
  // the field's readRoles, a canRead guard or the table's lists keep out learns only that the
  // check failed, as a unique clash of a write tells it (record-checks.ts).
  const named = allowsRole(field.props.readRoles, role) && field.props.canRead === undefined
    && tableRoleRefusal(ctx, table, role, 'read') === undefined;
  if (props.required === true && field.props.required !== true) {
    const rows = ctx.db
      .prepare(`SELECT id FROM records WHERE table_id = ? AND ${emptyTest(field)} ORDER BY id LIMIT ${SHOWN + 1}`)
      .all(table.key) as { id: number }[];
    if (rows.length > 0) {
      if (!named) throw new BadRequestError(`${where}.required: field ${field.name} cannot become required: a record has no value`);
      const list = rows.slice(0, SHOWN).map((r) => r.id).join(', ') + (rows.length > SHOWN ? ', …' : '');
      throw new BadRequestError(`${where}.required: field ${field.name} cannot become required: record${rows.length === 1 ? ' ' + list + ' has' : 's ' + list + ' have'} no value`);
    }
  }
  if (props.unique === true && field.props.unique !== true) {
    // Booleans compare as 0/1 and everything else by its JSON text, like the unique check of writes.
    const key = `coalesce(json_quote(${valueOf(field)}), '')`;
    const row = ctx.db
      .prepare(
        `SELECT ${valueOf(field)} AS v, group_concat(id, ', ') AS ids, count(*) AS n FROM (
           SELECT id, data FROM records WHERE table_id = ? AND NOT ${emptyTest(field)} ORDER BY id
         ) GROUP BY ${key} HAVING count(*) > 1 ORDER BY min(id) LIMIT 1`,
      )
      .get(table.key) as { v: unknown; ids: string; n: number } | undefined;
    if (row) {
      if (!named) throw new BadRequestError(`${where}.unique: field ${field.name} cannot become unique: a value repeats in ${row.n} records`);
      const ids = row.ids.split(', ');
      const shown = ids.slice(0, SHOWN).join(', ') + (ids.length > SHOWN ? ', …' : '');
      throw new BadRequestError(
        `${where}.unique: field ${field.name} cannot become unique: value ${JSON.stringify(row.v)} repeats in records ${shown}`,
      );
    }
  }
}
