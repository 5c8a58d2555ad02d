import {
  describeIssues, recordIdInputSchema, recordIdToNumber, type RecordIdInput,
} from '../../api/index.ts';
import type { EmulatorContext } from '../context.ts';
import { NotFoundError } from '../errors.ts';
import type { RequestBudget } from '../expression/request-budget.ts';
import type { ApiKeyGrant } from '../options.ts';
import type { Db } from './db.ts';
import {
  checkReferences, checkRequired, checkUnique, placeUnder, reportUnknown, type PendingRecord,
  type RecordPlace,
} from './record-checks.ts';
import { RecordExpressions } from './record-expressions.ts';
import { buildFieldPlans, type FieldPlan, type FieldPlans, type RecordValues } from './record-plans.ts';
import { dynamicStatement, ensureUniqueIndex, pageIndex, recordStatements } from './record-statements.ts';
import { INVALID, Issues, MAX_REPORTED, ValueConverter, literalDefaults } from './record-values.ts';
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
  ctx.changes.recordsChanged(table.key, ids, type, ctx.changes.stamp());
}

function placeOf(where: string | RecordPlace): RecordPlace {
  return typeof where === 'string' ? placeUnder(where) : where;
}

// ---- create and update -----------------------------------------------------------------------

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
  return new RecordWriter(ctx, table, fields, actor).create(records, placeOf(where));
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
  return new RecordWriter(ctx, table, fields, actor).update(records, placeOf(where));
}

/**
 * The creates and updates of one table by one actor. What does not depend on the records (field
 * plans, value converters, literal defaults, expressions, statements) is worked out once, so a
 * bulk writer (the CSV import) calls `create` or `update` once per batch and pays for the records
 * alone. Each call is one transaction (a savepoint inside an open one): it applies completely or
 * changes nothing. A writer serves one request or one import: after a call fails, make a new one.
 */
export class RecordWriter {
  readonly #ctx: EmulatorContext;
  readonly #table: TableRow;
  readonly #plans: FieldPlans;
  readonly #expressions: RecordExpressions;
  /** Value converters by field name. */
  readonly #forCreate: ReadonlyMap<string, ValueConverter>;
  readonly #forUpdate: ReadonlyMap<string, ValueConverter>;
  readonly #defaults: readonly { id: string; name: string; value: unknown }[];
  /**
   * Indexes this writer has made sure of (record-statements.ts), so each is made once, not per
   * call: the page index (`page`) and value indexes by field id. A failed call's rollback may undo
   * one, so a writer is not used again after a failure (see the class comment).
   */
  readonly #indexes = new Map<string, string>();
  readonly create: (records: readonly RecordValues[], place: RecordPlace) => number[];
  readonly update: (records: readonly RecordUpdate[], place: RecordPlace) => number[];

  /**
   * `bulk`: the caller holds a transaction over every call and abandons it at the first error (the
   * CSV import), so a call needs no savepoint of its own; it also brings the budget its calls'
   * evaluations share.
   */
  constructor(
    ctx: EmulatorContext, table: TableRow, fields: readonly FieldRow[], actor: ApiKeyGrant = SYSTEM_ACTOR,
    bulk?: { budget: RequestBudget },
  ) {
    this.#ctx = ctx;
    this.#table = table;
    this.#plans = buildFieldPlans(fields);
    this.#expressions = new RecordExpressions(ctx, table, fields, this.#plans, actor, bulk?.budget);
    this.#forCreate = new Map(this.#plans.list.map((plan) => [plan.field.name, new ValueConverter(plan, 'create')]));
    this.#forUpdate = new Map(this.#plans.list.map((plan) => [plan.field.name, new ValueConverter(plan, 'update')]));
    const literal = literalDefaults(this.#plans);
    this.#defaults = this.#plans.list
      .filter((plan) => literal.has(plan.field.id))
      .map((plan) => ({ id: plan.field.id, name: plan.field.name, value: literal.get(plan.field.id) }));
    const create = (records: readonly RecordValues[], place: RecordPlace) => this.#create(records, place);
    const update = (records: readonly RecordUpdate[], place: RecordPlace) => this.#update(records, place);
    this.create = bulk ? create : ctx.db.transaction(create);
    this.update = bulk ? update : ctx.db.transaction(update);
  }

  /** The converter of field `name`'s values in `mode` (the CSV import's keys go through it). */
  converter(name: string, mode: 'create' | 'update'): ValueConverter | undefined {
    return (mode === 'create' ? this.#forCreate : this.#forUpdate).get(name);
  }

  /** The name of the value index of a field (ensureUniqueIndex), made on this writer's first need of it. */
  /** Whether the writer's caller reads the field of a stored record (record-expressions.ts). */
  readsValue(plan: FieldPlan, id: number, data: () => Readonly<Record<string, unknown>>): boolean {
    return this.#expressions.readsValue(plan, id, data);
  }

  valueIndex(plan: FieldPlan): string {
    return this.#onceIndex(plan.field.id, () => ensureUniqueIndex(this.#ctx.db, this.#table, plan));
  }

  #onceIndex(key: string, make: () => string): string {
    let name = this.#indexes.get(key);
    if (name === undefined) {
      name = make();
      this.#indexes.set(key, name);
    }
    return name;
  }

  /**
   * The values `record` sends under `names` (an update's `id` aside), each through its converter
   * into `data` (null clears the field); returns the ids of the fields they set. Unknown names and
   * bad values are faults added to `issues`; nothing allocates for them unless there is one.
   */
  #readValues(
    mode: 'create' | 'update', record: RecordValues, names: readonly string[], data: Record<string, unknown>,
    index: number, place: RecordPlace, issues: Issues,
  ): Set<string> {
    const converters = mode === 'create' ? this.#forCreate : this.#forUpdate;
    const skipId = mode === 'update';
    // Unknown names first: a record's faults are reported in that order.
    let unknown: string[] | undefined;
    for (const name of names) {
      if (!(skipId && name === 'id') && !converters.has(name)) (unknown ??= []).push(name);
    }
    if (unknown) reportUnknown(unknown, place(index), this.#table, issues);
    const touched = new Set<string>();
    for (const name of names) {
      if (skipId && name === 'id') continue;
      const converter = converters.get(name);
      if (!converter) continue;
      const value = converter.convert(record[name], issues, place, index, name);
      // A computed field takes only null, which leaves it as it is: nothing stored, nothing touched.
      if (value === INVALID || converter.plan.readOnly) continue;
      const fieldId = converter.plan.field.id;
      touched.add(fieldId);
      if (value === null) delete data[fieldId];
      else data[fieldId] = value;
    }
    return touched;
  }

  // values → defaults → guards → required → selections → references → unique → write
  #create(records: readonly RecordValues[], place: RecordPlace): number[] {
    const issues = new Issues();
    const pending: PendingRecord[] = [];
    const readsSent = this.#expressions.readsSentFields;
    const sent: Set<string>[] = [];
    for (let index = 0; index < records.length; index++) {
      const record = records[index]!;
      const names = Object.keys(record);
      const data: Record<string, unknown> = {};
      const touched = this.#readValues('create', record, names, data, index, place, issues);
      for (const d of this.#defaults) {
        if (Object.hasOwn(record, d.name)) continue;
        data[d.id] = d.value;
        touched.add(d.id);
      }
      const p: PendingRecord = { index, id: undefined, data, touched };
      if (readsSent) {
        const sentNames = new Set(names);
        this.#expressions.applyDefaults(p, sentNames, place, issues);
        sent.push(sentNames);
      }
      pending.push(p);
    }
    issues.throwIfAny();
    this.#expressions.checkWriteGuards(pending, sent, undefined, place);
    this.#checkTable(pending, 'create', place, issues);

    this.#onceIndex('page', () => pageIndex(this.#ctx.db, this.#table.key));
    const ids = insertRecords(this.#ctx.db, this.#table.key, pending.map((p) => JSON.stringify(p.data)));
    logChanges(this.#ctx, this.#table, ids, 'create');
    return ids;
  }

  // ids → existing → values → guards → triggers → required → selections → references → unique → write
  #update(records: readonly RecordUpdate[], place: RecordPlace): number[] {
    const ids = parseIds(records.map((r) => r.id), place, 'id');
    const existing = requireExisting(this.#ctx.db, this.#table, ids);
    const issues = new Issues();
    const pending: PendingRecord[] = [];
    const sent: Set<string>[] = [];
    for (let index = 0; index < records.length; index++) {
      const record = records[index]!;
      const id = ids[index]!;
      const names = Object.keys(record);
      const data = JSON.parse(existing.get(id)!) as Record<string, unknown>;
      sent.push(new Set(names.filter((name) => name !== 'id')));
      const touched = this.#readValues('update', record, names, data, index, place, issues);
      pending.push({ index, id, data, touched });
    }
    issues.throwIfAny();
    this.#expressions.checkWriteGuards(pending, sent, existing, place);
    this.#expressions.runTriggers(pending, existing, place, issues);
    issues.throwIfAny();
    this.#checkTable(pending, 'update', place, issues);

    const update = recordStatements(this.#ctx.db).update;
    for (const p of pending) update.run(JSON.stringify(p.data), p.id);
    logChanges(this.#ctx, this.#table, ids, 'update');
    return ids;
  }

  /** The checks of the records against the table, after the value and expression stages. */
  #checkTable(pending: readonly PendingRecord[], mode: 'create' | 'update', place: RecordPlace, issues: Issues): void {
    for (const p of pending) checkRequired(this.#plans, p, mode, place, issues);
    this.#expressions.checkSelections(pending, place, issues);
    checkReferences(this.#ctx.db, this.#plans, pending, place, issues);
    checkUnique(
      this.#ctx.db, this.#table, this.#plans, pending, place, issues, (plan) => this.valueIndex(plan),
      (plan, id, data) => this.#expressions.readsValue(plan, id, data),
    );
    issues.throwIfAny();
  }
}

/** Rows per INSERT statement: one statement per row costs about half again as much. */
const INSERT_ROWS = 100;

/**
 * Inserts records (their data as JSON text) and returns their ids in order. `records.id` is
 * AUTOINCREMENT, so each new id is larger than every id before it: the ids a statement returns,
 * sorted, are in the order of its rows.
 */
function insertRecords(db: Db, tableKey: number, data: readonly string[]): number[] {
  const ids: number[] = [];
  for (let start = 0; start < data.length; start += INSERT_ROWS) {
    const rows = data.slice(start, start + INSERT_ROWS);
    const sql = `INSERT INTO records (table_id, data) VALUES ${`(${tableKey}, ?), `.repeat(rows.length - 1)}(${tableKey}, ?) RETURNING id`;
    const inserted = (dynamicStatement(db, sql).pluck().all(rows) as number[]).sort((a, b) => a - b);
    for (const id of inserted) ids.push(id);
  }
  return ids;
}

// ---- ids ---------------------------------------------------------------------------------------

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
