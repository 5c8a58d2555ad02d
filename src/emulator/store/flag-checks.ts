import { isReadOnlyType } from '../../api/index.ts';
import type { EmulatorContext } from '../context.ts';
import { BadRequestError } from '../errors.ts';
import { allowsRole, tableRoleRefusal } from './table-roles.ts';
import type { FieldProps, FieldRow, TableRow } from './schema-rows.ts';

/**
 * `required` and `unique` must hold for the records the table has when they are set: a field that
 * becomes unique or required, or a new field created required, is 400 otherwise (naming a few
 * records at fault) and nothing changes. Fields that were unique or required before are not
 * checked again. (Computed fields take neither flag: field-rules.ts.)
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

/**
 * Records and values are named only to a role that reads the field in every record: a role the
 * field's readRoles, a canRead guard or the table's lists keep out learns only that the check
 * failed, as a unique clash of a write tells it (record-checks.ts).
 */
function namesRecords(ctx: EmulatorContext, table: TableRow, props: Pick<FieldProps, 'readRoles' | 'canRead'>, role: string): boolean {
  return allowsRole(props.readRoles, role) && props.canRead === undefined && tableRoleRefusal(ctx, table, role, 'read') === undefined;
}

/** Up to SHOWN + 1 ids of records of the table matching `condition`, in id order. */
function recordIds(ctx: EmulatorContext, table: TableRow, condition: string): number[] {
  const rows = ctx.db
    .prepare(`SELECT id FROM records WHERE table_id = ? AND ${condition} ORDER BY id LIMIT ${SHOWN + 1}`)
    .all(table.key) as { id: number }[];
  return rows.map((r) => r.id);
}

function shownIds(ids: readonly (number | string)[]): string {
  return ids.slice(0, SHOWN).join(', ') + (ids.length > SHOWN ? ', …' : '');
}

/** A field created `required` on a table with records: none of them has a value for it yet. */
export function checkNewFieldRequired(
  ctx: EmulatorContext, table: TableRow, field: { name: string; required?: boolean | undefined } & Pick<FieldProps, 'readRoles' | 'canRead'>,
  where: string, role: string,
): void {
  if (field.required !== true) return;
  const ids = recordIds(ctx, table, '1');
  if (ids.length === 0) return;
  const at = `${where}.required: field ${field.name} cannot be required`;
  if (!namesRecords(ctx, table, field, role)) throw new BadRequestError(`${at}: the table has records, which would have no value`);
  throw new BadRequestError(`${at}: record${ids.length === 1 ? ` ${ids[0]}` : `s ${shownIds(ids)}`} would have no value`);
}

export function checkNewFlags(ctx: EmulatorContext, table: TableRow, field: FieldRow, props: FieldProps, where: string, role: string): void {
  if (!/^f[0-9]+$/.test(field.id) || isReadOnlyType(field.type)) return;
  const named = namesRecords(ctx, table, field.props, role);
  if (props.required === true && field.props.required !== true) {
    const ids = recordIds(ctx, table, emptyTest(field));
    if (ids.length > 0) {
      if (!named) throw new BadRequestError(`${where}.required: field ${field.name} cannot become required: a record has no value`);
      throw new BadRequestError(`${where}.required: field ${field.name} cannot become required: record${ids.length === 1 ? ' ' + ids[0] + ' has' : 's ' + shownIds(ids) + ' have'} no value`);
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
      throw new BadRequestError(
        `${where}.unique: field ${field.name} cannot become unique: value ${JSON.stringify(row.v)} repeats in records ${shownIds(row.ids.split(', '))}`,
      );
    }
  }
}
