import {
  describeIssues, recordIdInputSchema, recordIdToNumber, type RecordIdInput,
} from '../../api/index.ts';
import type { EmulatorContext } from '../context.ts';
import { NotFoundError } from '../errors.ts';
import type { ApiKeyGrant } from '../options.ts';
import type { Db } from './database.ts';
import {
  checkReferences, checkRequired, checkUnique, placeUnder, reportUnknown, unknownFields, type PendingRecord,
  type RecordPlace,
} from './record-checks.ts';
import { RecordExpressions } from './record-expressions.ts';
import { buildFieldPlans, type RecordValues } from './record-plans.ts';
import { pageIndex, recordStatements } from './record-statements.ts';
import { INVALID, Issues, MAX_REPORTED, convertValue, literalDefaults } from './record-values.ts';
import type { FieldRow, TableRow } from './schema-rows.ts';
import { SYSTEM_ACTOR } from './table-roles.ts';

/**
 * Records of every table live in `records(id, table_id, data)`, `data` being a JSON object keyed
 * by public field id (`f12`), so a field rename never rewrites records. A cleared value is an
 * absent key. Every operation validates the whole request first and writes afterwards, inside one
 * transaction: a request either applies completely or changes nothing.
 *
 * This file holds the writes (create, update, delete) and sequences the stages of the records
 * pipeline, each a file that imports only the ones before it:
 *
 *   record-plans.ts        what each field is (once per request)
 *   record-values.ts       each value to its stored form; literal defaults
 *   record-checks.ts       the whole request against the table: unknown fields, required,
 *                          references, unique
 *   record-expressions.ts  $nx defaults, canWrite and writeRoles, onUpdate triggers, selections;
 *                          on reads function fields, canRead and readRoles
 *   record-store.ts        create: values → defaults → guards → required → selections →
 *                          references → unique → write; update: values → guards → triggers →
 *                          required → selections → references → unique → write
 *   record-list.ts         reads: filter, sort, page, computed values
 */

export type { RecordValues };
export type RecordUpdate = RecordValues & { readonly id: RecordIdInput };

function logChanges(ctx: EmulatorContext, table: TableRow, ids: readonly number[], type: 'create' | 'update' | 'delete'): void {
  if (table.props.hasHistory !== true || ids.length === 0) return;
  const at = ctx.changes.stamp();
  for (const id of ids) ctx.changes.recordChanged(table.key, id, type, at);
}

// ---- create ----------------------------------------------------------------------------------

/**
 * Creates records (flat objects of field name to value) in one transaction and returns their ids
 * in request order. `where` names the records in error messages: a path (`body.records`, a seed
 * path) or a function (the lines of a CSV file).
 */
export function createRecords(
  ctx: EmulatorContext,
  table: TableRow,
  fields: readonly FieldRow[],
  records: readonly RecordValues[],
  where: string | RecordPlace = 'body.records',
  actor: ApiKeyGrant = SYSTEM_ACTOR,
): number[] {
  const place = typeof where === 'string' ? placeUnder(where) : where;
  const plans = buildFieldPlans(fields);
  const st = recordStatements(ctx.db);
  const expressions = new RecordExpressions(ctx, table, fields, plans, actor);
  const defaults = literalDefaults(plans);
  return ctx.db.transaction(() => {
    const issues = new Issues();
    const pending: PendingRecord[] = [];
    const sent: Set<string>[] = [];
    records.forEach((record, index) => {
      reportUnknown(unknownFields(record, plans, false), place(index), table, issues);
      const data: Record<string, unknown> = {};
      const touched = new Set<string>();
      for (const name of Object.keys(record)) {
        const plan = plans.byName.get(name);
        if (!plan) continue;
        const value = convertValue(plan, record[name], 'create', place(index, name), issues);
        if (value === INVALID) continue;
        touched.add(plan.field.id);
        if (value !== null) data[plan.field.id] = value;
      }
      for (const plan of plans.list) {
        const value = defaults.get(plan.field.id);
        if (value !== undefined && !Object.hasOwn(record, plan.field.name)) {
          data[plan.field.id] = value;
          touched.add(plan.field.id);
        }
      }
      const p: PendingRecord = { index, id: undefined, data, touched };
      const names = new Set(Object.keys(record));
      expressions.applyDefaults(p, names, place, issues);
      pending.push(p);
      sent.push(names);
    });
    issues.throwIfAny();
    expressions.checkWriteGuards(pending, sent, undefined, place);
    for (const p of pending) checkRequired(plans, p, 'create', place, issues);
    expressions.checkSelections(pending, place, issues);
    checkReferences(ctx.db, plans, pending, place, issues);
    checkUnique(ctx.db, table, plans, pending, place, issues);
    issues.throwIfAny();

    pageIndex(ctx.db, table.key);
    const ids = pending.map((p) => Number(st.insert.run(table.key, JSON.stringify(p.data)).lastInsertRowid));
    logChanges(ctx, table, ids, 'create');
    return ids;
  })();
}

// ---- update ----------------------------------------------------------------------------------

function parseIds(ids: readonly unknown[], place: RecordPlace, key?: string): number[] {
  const issues = new Issues();
  const out: number[] = [];
  const firstAt = new Map<number, number>();
  ids.forEach((raw, index) => {
    const at = place(index, key);
    const parsed = recordIdInputSchema.safeParse(raw);
    if (!parsed.success) {
      issues.add(describeIssues(parsed.error.issues, at));
      return;
    }
    const id = recordIdToNumber(parsed.data);
    const first = firstAt.get(id);
    if (first !== undefined) issues.add(`${at}: record id ${id} repeats ${place(first)}`);
    else firstAt.set(id, index);
    out.push(id);
  });
  issues.throwIfAny();
  return out;
}

function requireExisting(db: Db, table: TableRow, ids: readonly number[]): Map<number, string> {
  const rows = recordStatements(db).rowsIn.all(table.key, JSON.stringify(ids)) as { id: number; data: string }[];
  const found = new Map(rows.map((r) => [r.id, r.data]));
  const missing = ids.filter((id) => !found.has(id));
  if (missing.length > 0) {
    const shown = missing.slice(0, MAX_REPORTED).join(', ') + (missing.length > MAX_REPORTED ? ', …' : '');
    throw new NotFoundError(
      `record${missing.length === 1 ? '' : 's'} ${shown} not found in table ${table.moduleName}.${table.name}`,
    );
  }
  return found;
}

/**
 * Updates records (each with `id` plus the fields to change; `null` clears) in one transaction.
 * Order of checks: ids well-formed and distinct (400), every record exists (404), values (400).
 */
export function updateRecords(
  ctx: EmulatorContext,
  table: TableRow,
  fields: readonly FieldRow[],
  records: readonly RecordUpdate[],
  where: string | RecordPlace = 'body.records',
  actor: ApiKeyGrant = SYSTEM_ACTOR,
): number[] {
  const place = typeof where === 'string' ? placeUnder(where) : where;
  const plans = buildFieldPlans(fields);
  const st = recordStatements(ctx.db);
  const expressions = new RecordExpressions(ctx, table, fields, plans, actor);
  return ctx.db.transaction(() => {
    const ids = parseIds(records.map((r) => r.id), place, 'id');
    const existing = requireExisting(ctx.db, table, ids);
    const issues = new Issues();
    const pending: PendingRecord[] = [];
    const sent: Set<string>[] = [];
    records.forEach((record, index) => {
      const id = ids[index]!;
      reportUnknown(unknownFields(record, plans, true), place(index), table, issues);
      const data = JSON.parse(existing.get(id)!) as Record<string, unknown>;
      sent.push(new Set(Object.keys(record).filter((name) => name !== 'id')));
      const touched = new Set<string>();
      for (const name of Object.keys(record)) {
        if (name === 'id') continue;
        const plan = plans.byName.get(name);
        if (!plan) continue;
        const value = convertValue(plan, record[name], 'update', place(index, name), issues);
        if (value === INVALID) continue;
        touched.add(plan.field.id);
        if (value === null) delete data[plan.field.id];
        else data[plan.field.id] = value;
      }
      pending.push({ index, id, data, touched });
    });
    issues.throwIfAny();
    expressions.checkWriteGuards(pending, sent, existing, place);
    expressions.runTriggers(pending, existing, place, issues);
    issues.throwIfAny();
    for (const p of pending) checkRequired(plans, p, 'update', place, issues);
    expressions.checkSelections(pending, place, issues);
    checkReferences(ctx.db, plans, pending, place, issues);
    checkUnique(ctx.db, table, plans, pending, place, issues);
    issues.throwIfAny();

    for (const p of pending) st.update.run(JSON.stringify(p.data), p.id);
    logChanges(ctx, table, ids, 'update');
    return ids;
  })();
}

// ---- delete ----------------------------------------------------------------------------------

/** Deletes records by id in one transaction: ids valid and distinct (400), all existing (404). */
export function deleteRecords(ctx: EmulatorContext, table: TableRow, ids: readonly unknown[], where = 'body.records'): number[] {
  const st = recordStatements(ctx.db);
  return ctx.db.transaction(() => {
    const parsed = parseIds(ids, placeUnder(where));
    const found = st.idsIn.all(table.key, JSON.stringify(parsed)) as { id: number }[];
    if (found.length !== parsed.length) requireExisting(ctx.db, table, parsed);
    for (const id of parsed) st.remove.run(id);
    logChanges(ctx, table, parsed, 'delete');
    return parsed;
  })();
}
