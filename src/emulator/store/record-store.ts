import type { Statement } from 'better-sqlite3';
import {
  DEFAULT_PAGE_LIMIT, describeIssues, formatPath, isReadOnlyType, recordIdInputSchema, recordIdToNumber, recordValueSchema,
  type ApiRecord, type FieldType, type Option, type PageInfo, type RecordIdInput, type RecordListQuery,
} from '../../api/index.ts';
import type { EmulatorContext } from '../context.ts';
import { BadRequestError, NotFoundError } from '../errors.ts';
import type { Db } from './database.ts';
import type { FieldRow, TableRow } from './schema-rows.ts';
import { recordsIndexName, uniqueIndexName } from './table-indexes.ts';

/**
 * Records of every table live in `records(id, table_id, data)`, `data` being a JSON object keyed
 * by public field id (`f12`), so a field rename never rewrites records. A cleared value is an
 * absent key. Every operation validates the whole request first and writes afterwards, inside one
 * transaction: a request either applies completely or changes nothing.
 */

export type RecordValues = Readonly<Record<string, unknown>>;
export type RecordUpdate = RecordValues & { readonly id: RecordIdInput };

export interface RecordPage {
  data: ApiRecord[];
  page_info: PageInfo;
}

// ---- prepared statements, one set per database -----------------------------------------------

interface Statements {
  insert: Statement;
  update: Statement;
  remove: Statement;
  removeAll: Statement;
  rowsIn: Statement;
  idsIn: Statement;
  rowsByIds: Statement;
  dynamic: Map<string, Statement>;
}

const statementsByDb = new WeakMap<Db, Statements>();

function statements(db: Db): Statements {
  let st = statementsByDb.get(db);
  if (!st) {
    st = {
      insert: db.prepare('INSERT INTO records (table_id, data) VALUES (?, ?)'),
      update: db.prepare('UPDATE records SET data = ? WHERE id = ?'),
      remove: db.prepare('DELETE FROM records WHERE id = ?'),
      removeAll: db.prepare('DELETE FROM records WHERE table_id = ?'),
      rowsIn: db.prepare('SELECT id, data FROM records WHERE table_id = ? AND id IN (SELECT value FROM json_each(?))'),
      idsIn: db.prepare('SELECT id FROM records WHERE table_id = ? AND id IN (SELECT value FROM json_each(?))'),
      rowsByIds: db.prepare('SELECT id, data FROM records WHERE id IN (SELECT value FROM json_each(?))'),
      dynamic: new Map(),
    };
    statementsByDb.set(db, st);
  }
  return st;
}

/** Statements whose text depends on the request (filters, sort, per-field paths), kept by text. */
function dynamicStatement(db: Db, sql: string): Statement {
  const st = statements(db);
  let stmt = st.dynamic.get(sql);
  if (!stmt) {
    if (st.dynamic.size >= 500) st.dynamic.clear();
    stmt = db.prepare(sql);
    st.dynamic.set(sql, stmt);
  }
  return stmt;
}

// ---- per-request field plans -----------------------------------------------------------------

interface FieldPlan {
  readonly field: FieldRow;
  /** JSON path of the value in `data`; field ids are `f<digits>`, so the literal is safe in SQL. */
  readonly path: string;
  readonly type: FieldType;
  readonly readOnly: boolean;
  readonly required: boolean;
  readonly unique: boolean;
  /** choice/multi: option id or exact option name → option id. */
  readonly options: ReadonlyMap<string, string> | undefined;
  /** Options in display order (choice sorting). */
  readonly orderedOptionIds: readonly string[];
  /** reference: internal key of the referenced table. */
  readonly refTableKey: number | undefined;
  /** Canonical literal default, or undefined. */
  readonly defaultValue: unknown;
}

interface Plans {
  readonly byName: ReadonlyMap<string, FieldPlan>;
  readonly list: readonly FieldPlan[];
}

const INVALID = Symbol('invalid');

function buildPlans(fields: readonly FieldRow[]): Plans {
  const list: FieldPlan[] = [];
  for (const field of fields) {
    if (!/^f[0-9]+$/.test(field.id)) throw new Error(`unexpected field id ${field.id}`);
    const props = field.props;
    let options: Map<string, string> | undefined;
    let orderedOptionIds: string[] = [];
    if ((field.type === 'choice' || field.type === 'multi') && Array.isArray(props.options)) {
      const opts = props.options as Option[];
      options = new Map(opts.map((o) => [o.id, o.id]));
      // An exact option name is accepted too, unless it is another option's id.
      for (const o of opts) if (!options.has(o.name)) options.set(o.name, o.id);
      orderedOptionIds = opts
        .map((o, i) => ({ o, i }))
        .sort((a, b) => (a.o.order ?? a.i) - (b.o.order ?? b.i) || a.i - b.i)
        .map(({ o }) => o.id);
    }
    const ref = /^t([0-9]+)$/.exec(props.refTableId ?? '');
    const partial = {
      field,
      path: `$.${field.id}`,
      type: field.type,
      readOnly: isReadOnlyType(field.type),
      required: props.required === true,
      unique: props.unique === true,
      options,
      orderedOptionIds,
      refTableKey: field.type === 'reference' && ref ? Number(ref[1]) : undefined,
      defaultValue: undefined as unknown,
    };
    partial.defaultValue = literalDefault(partial, props.defaultValue);
    list.push(partial);
  }
  return { byName: new Map(list.map((p) => [p.field.name, p])), list };
}

/**
 * A literal `defaultValue` in canonical form. `{ $nx }` expressions are not evaluated yet, and a
 * literal that is no longer valid (say, a removed option) is ignored rather than failing creates.
 */
function literalDefault(plan: FieldPlan, value: unknown): unknown {
  if (value === undefined || value === null || plan.readOnly) return undefined;
  if (typeof value === 'object' && !Array.isArray(value)) return undefined;
  const sink = new Issues();
  const converted = convertValue(plan, value, 'create', '', sink);
  return converted === INVALID || converted === null || sink.count > 0 ? undefined : converted;
}

// ---- issues ----------------------------------------------------------------------------------

const MAX_REPORTED = 20;

/** Collects every validation failure of a request; the 400 names up to 20 of them. */
class Issues {
  readonly list: string[] = [];
  count = 0;
  add(message: string): void {
    this.count++;
    if (this.list.length < MAX_REPORTED) this.list.push(message);
  }
  throwIfAny(): void {
    if (this.count === 0) return;
    const more = this.count > this.list.length ? `; and ${this.count - this.list.length} more` : '';
    throw new BadRequestError(this.list.join('; ') + more);
  }
}

// ---- values ----------------------------------------------------------------------------------

function isEmpty(value: unknown): boolean {
  return value === null || value === undefined || value === '' || (Array.isArray(value) && value.length === 0);
}

function optionList(plan: FieldPlan): string {
  const opts = (plan.field.props.options as Option[] | undefined) ?? [];
  const shown = opts.slice(0, 10).map((o) => `${o.id} (${JSON.stringify(o.name)})`);
  if (opts.length > 10) shown.push('…');
  return shown.length === 0 ? 'the field has no options' : `options: ${shown.join(', ')}`;
}

/** One value through the value table (shape, canonical form) and the field's own options. */
function convertValue(plan: FieldPlan, raw: unknown, mode: 'create' | 'update', where: string, issues: Issues): unknown {
  const parsed = recordValueSchema(plan.type, mode).safeParse(raw);
  if (!parsed.success) {
    issues.add(describeIssues(parsed.error.issues, where));
    return INVALID;
  }
  const value: unknown = parsed.data;
  if (value === null) return null;
  if (plan.type === 'choice') {
    const id = plan.options?.get(value as string);
    if (id === undefined) {
      issues.add(`${where}: ${JSON.stringify(value)} is not an option of field ${plan.field.name} (${optionList(plan)})`);
      return INVALID;
    }
    return id;
  }
  if (plan.type === 'multi') {
    const ids: string[] = [];
    for (const item of value as string[]) {
      const id = plan.options?.get(item);
      if (id === undefined) {
        issues.add(`${where}: ${JSON.stringify(item)} is not an option of field ${plan.field.name} (${optionList(plan)})`);
        return INVALID;
      }
      if (ids.includes(id)) {
        issues.add(`${where}: option ${id} appears more than once`);
        return INVALID;
      }
      ids.push(id);
    }
    return ids;
  }
  if (plan.type === 'dmulti' && new Set(value as string[]).size !== (value as string[]).length) {
    issues.add(`${where}: a record id appears more than once`);
    return INVALID;
  }
  return value;
}

interface Pending {
  /** Index of the record in the request. */
  index: number;
  /** Record id (updates). */
  id: number | undefined;
  data: Record<string, unknown>;
  /** Keys set by this request (updates: only those can break uniqueness against the table). */
  touched: Set<string>;
}

function unknownFields(record: RecordValues, plans: Plans, skipId: boolean): string[] {
  const out: string[] = [];
  for (const name of Object.keys(record)) {
    if (skipId && name === 'id') continue;
    if (!plans.byName.has(name)) out.push(name);
  }
  return out;
}

function reportUnknown(names: string[], where: string, table: TableRow, issues: Issues): void {
  if (names.length === 0) return;
  const list = names.map((n) => JSON.stringify(n)).join(', ');
  issues.add(`${where}: unknown field${names.length === 1 ? '' : 's'} ${list} in table ${table.moduleName}.${table.name}`);
}

/** Every reference points at an existing record of the referenced table. */
function checkReferences(db: Db, plans: Plans, pending: readonly Pending[], where: string, issues: Issues): void {
  const st = statements(db);
  for (const plan of plans.list) {
    if (plan.type !== 'reference') continue;
    const wanted = new Set<number>();
    for (const p of pending) {
      if (!p.touched.has(plan.field.id)) continue;
      const v = p.data[plan.field.id];
      if (typeof v === 'number') wanted.add(v);
    }
    if (wanted.size === 0) continue;
    const found = new Set<number>();
    if (plan.refTableKey !== undefined) {
      for (const row of st.idsIn.all(plan.refTableKey, JSON.stringify([...wanted])) as { id: number }[]) found.add(row.id);
    }
    for (const p of pending) {
      if (!p.touched.has(plan.field.id)) continue;
      const v = p.data[plan.field.id];
      if (typeof v === 'number' && !found.has(v)) {
        const target = plan.field.props.refTableId ?? 'the referenced table';
        issues.add(`${formatPath(where, [p.index, plan.field.name])}: record ${v} does not exist in ${target}`);
      }
    }
  }
}

/**
 * Partial indexes are created on first use. The statement runs every time (a no-op once the index
 * exists), so an index whose creation was rolled back with a failed request is simply made again.
 * Deleting their table or field drops them (table-indexes.ts).
 */
function ensureIndex(db: Db, name: string, definition: string): void {
  dynamicStatement(db, `CREATE INDEX IF NOT EXISTS "${name}" ON ${definition}`).run();
}

/** An expression index per unique field keeps the check fast on large tables. */
function ensureUniqueIndex(db: Db, table: TableRow, plan: FieldPlan): void {
  ensureIndex(db, uniqueIndexName(table.key, plan.field.id), `records (json_extract(data, '${plan.path}')) WHERE table_id = ${table.key}`);
}

/**
 * Each table's records get a partial index on id: walking it for a deep OFFSET is about three
 * times faster than walking the shared (table_id, id) index, which compares the key on every row.
 */
function pageIndex(db: Db, tableKey: number): string {
  const name = recordsIndexName(tableKey);
  ensureIndex(db, name, `records (id) WHERE table_id = ${tableKey}`);
  return name;
}

function uniqueKey(value: unknown): string {
  return typeof value === 'boolean' ? String(Number(value)) : JSON.stringify(value);
}

/** Unique values repeat neither within the request nor against the rest of the table. */
function checkUnique(db: Db, table: TableRow, plans: Plans, pending: readonly Pending[], where: string, issues: Issues): void {
  const inRequest = new Set(pending.map((p) => p.id).filter((id) => id !== undefined));
  for (const plan of plans.list) {
    if (!plan.unique || plan.readOnly) continue;
    const key = plan.field.id;
    const seen = new Map<string, Pending>();
    const toCheck = new Map<string, Pending[]>();
    for (const p of pending) {
      const v = p.data[key];
      if (isEmpty(v)) continue;
      const k = uniqueKey(v);
      const first = seen.get(k);
      if (first && (p.touched.has(key) || first.touched.has(key))) {
        issues.add(
          `${formatPath(where, [p.index, plan.field.name])}: value ${JSON.stringify(v)} of unique field ${plan.field.name} repeats ${formatPath(where, [first.index])}`,
        );
        continue;
      }
      seen.set(k, p);
      if (p.touched.has(key)) toCheck.set(k, [...(toCheck.get(k) ?? []), p]);
    }
    if (toCheck.size === 0) continue;
    ensureUniqueIndex(db, table, plan);
    const values = [...toCheck.values()].map((ps) => ps[0]!.data[key]);
    const sql = `SELECT id, data -> '${plan.path}' AS v FROM records
      WHERE table_id = ${table.key} AND json_extract(data, '${plan.path}') IN (SELECT value FROM json_each(?))`;
    const rows = dynamicStatement(db, sql).all(JSON.stringify(values)) as { id: number; v: string }[];
    for (const row of rows) {
      if (inRequest.has(row.id)) continue; // its final value is checked above
      const k = uniqueKey(JSON.parse(row.v));
      for (const p of toCheck.get(k) ?? []) {
        issues.add(
          `${formatPath(where, [p.index, plan.field.name])}: value ${JSON.stringify(p.data[key])} of unique field ${plan.field.name} already exists in record ${row.id}`,
        );
      }
    }
  }
}

function checkRequired(plans: Plans, p: Pending, mode: 'create' | 'update', where: string, issues: Issues): void {
  for (const plan of plans.list) {
    if (!plan.required || plan.readOnly) continue;
    // On update only a value cleared by this request is an error: older gaps stay readable.
    if (mode === 'update' && !p.touched.has(plan.field.id)) continue;
    if (isEmpty(p.data[plan.field.id])) {
      issues.add(
        mode === 'create'
          ? `${formatPath(where, [p.index, plan.field.name])}: field ${plan.field.name} is required`
          : `${formatPath(where, [p.index, plan.field.name])}: field ${plan.field.name} is required and cannot be cleared`,
      );
    }
  }
}

function logChanges(ctx: EmulatorContext, table: TableRow, ids: readonly number[], type: 'create' | 'update' | 'delete'): void {
  if (table.props.hasHistory !== true || ids.length === 0) return;
  const at = ctx.changes.stamp();
  for (const id of ids) ctx.changes.recordChanged(table.key, id, type, at);
}

// ---- create ----------------------------------------------------------------------------------

/**
 * Creates records (flat objects of field name to value) in one transaction and returns their ids
 * in request order. `where` names the records in error messages (`body.records`, a seed path).
 */
export function createRecords(
  ctx: EmulatorContext,
  table: TableRow,
  fields: readonly FieldRow[],
  records: readonly RecordValues[],
  where = 'body.records',
): number[] {
  const plans = buildPlans(fields);
  const st = statements(ctx.db);
  return ctx.db.transaction(() => {
    const issues = new Issues();
    const pending: Pending[] = [];
    records.forEach((record, index) => {
      reportUnknown(unknownFields(record, plans, false), formatPath(where, [index]), table, issues);
      const data: Record<string, unknown> = {};
      const touched = new Set<string>();
      for (const name of Object.keys(record)) {
        const plan = plans.byName.get(name);
        if (!plan) continue;
        const value = convertValue(plan, record[name], 'create', formatPath(where, [index, name]), issues);
        if (value === INVALID) continue;
        touched.add(plan.field.id);
        if (value !== null) data[plan.field.id] = value;
      }
      for (const plan of plans.list) {
        if (plan.defaultValue !== undefined && !Object.hasOwn(record, plan.field.name)) {
          data[plan.field.id] = plan.defaultValue;
          touched.add(plan.field.id);
        }
      }
      const p: Pending = { index, id: undefined, data, touched };
      checkRequired(plans, p, 'create', where, issues);
      pending.push(p);
    });
    issues.throwIfAny();
    checkReferences(ctx.db, plans, pending, where, issues);
    checkUnique(ctx.db, table, plans, pending, where, issues);
    issues.throwIfAny();

    pageIndex(ctx.db, table.key);
    const ids = pending.map((p) => Number(st.insert.run(table.key, JSON.stringify(p.data)).lastInsertRowid));
    logChanges(ctx, table, ids, 'create');
    return ids;
  })();
}

// ---- update ----------------------------------------------------------------------------------

function parseIds(ids: readonly unknown[], where: string, key?: string): number[] {
  const issues = new Issues();
  const out: number[] = [];
  const firstAt = new Map<number, number>();
  ids.forEach((raw, index) => {
    const at = formatPath(where, key === undefined ? [index] : [index, key]);
    const parsed = recordIdInputSchema.safeParse(raw);
    if (!parsed.success) {
      issues.add(describeIssues(parsed.error.issues, at));
      return;
    }
    const id = recordIdToNumber(parsed.data);
    const first = firstAt.get(id);
    if (first !== undefined) issues.add(`${at}: record id ${id} repeats ${formatPath(where, [first])}`);
    else firstAt.set(id, index);
    out.push(id);
  });
  issues.throwIfAny();
  return out;
}

function requireExisting(db: Db, table: TableRow, ids: readonly number[]): Map<number, string> {
  const rows = statements(db).rowsIn.all(table.key, JSON.stringify(ids)) as { id: number; data: string }[];
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
  where = 'body.records',
): number[] {
  const plans = buildPlans(fields);
  const st = statements(ctx.db);
  return ctx.db.transaction(() => {
    const ids = parseIds(records.map((r) => r.id), where, 'id');
    const existing = requireExisting(ctx.db, table, ids);
    const issues = new Issues();
    const pending: Pending[] = [];
    records.forEach((record, index) => {
      const id = ids[index]!;
      reportUnknown(unknownFields(record, plans, true), formatPath(where, [index]), table, issues);
      const data = JSON.parse(existing.get(id)!) as Record<string, unknown>;
      const touched = new Set<string>();
      for (const name of Object.keys(record)) {
        if (name === 'id') continue;
        const plan = plans.byName.get(name);
        if (!plan) continue;
        const value = convertValue(plan, record[name], 'update', formatPath(where, [index, name]), issues);
        if (value === INVALID) continue;
        touched.add(plan.field.id);
        if (value === null) delete data[plan.field.id];
        else data[plan.field.id] = value;
      }
      const p: Pending = { index, id, data, touched };
      checkRequired(plans, p, 'update', where, issues);
      pending.push(p);
    });
    issues.throwIfAny();
    checkReferences(ctx.db, plans, pending, where, issues);
    checkUnique(ctx.db, table, plans, pending, where, issues);
    issues.throwIfAny();

    for (const p of pending) st.update.run(JSON.stringify(p.data), p.id);
    logChanges(ctx, table, ids, 'update');
    return ids;
  })();
}

// ---- delete ----------------------------------------------------------------------------------

/** Deletes records by id in one transaction: ids valid and distinct (400), all existing (404). */
export function deleteRecords(ctx: EmulatorContext, table: TableRow, ids: readonly unknown[], where = 'body.records'): number[] {
  const st = statements(ctx.db);
  return ctx.db.transaction(() => {
    const parsed = parseIds(ids, where);
    const found = st.idsIn.all(table.key, JSON.stringify(parsed)) as { id: number }[];
    if (found.length !== parsed.length) requireExisting(ctx.db, table, parsed);
    for (const id of parsed) st.remove.run(id);
    logChanges(ctx, table, parsed, 'delete');
    return parsed;
  })();
}

/** Removes every record of a table (table deletion); no record changes are logged. */
export function deleteAllRecordsOf(ctx: EmulatorContext, tableKey: number): void {
  statements(ctx.db).removeAll.run(tableKey);
}

// ---- list ------------------------------------------------------------------------------------

function requireKnown(names: readonly string[], plans: Plans, where: string, table: TableRow): void {
  const unknown = names.filter((n) => !plans.byName.has(n));
  if (unknown.length === 0) return;
  const list = unknown.map((n) => JSON.stringify(n)).join(', ');
  throw new BadRequestError(`${where}: unknown field${unknown.length === 1 ? '' : 's'} ${list} in table ${table.moduleName}.${table.name}`);
}

/**
 * A filter value in stored form, read like an update value or else like a create value; an
 * unknown choice option stays as sent and matches nothing.
 */
function filterValue(plan: FieldPlan, raw: unknown, where: string): unknown {
  const issues = new Issues();
  let value: unknown;
  if (plan.type === 'multi' || plan.type === 'dmulti') {
    // A scalar matches records whose array holds it.
    const parsed = recordValueSchema(plan.type, 'update').safeParse([raw]);
    if (!parsed.success) issues.add(describeIssues(parsed.error.issues, where).replace(/\[0\]/, ''));
    else value = plan.type === 'multi' ? (plan.options?.get(raw as string) ?? raw) : (parsed.data as string[])[0];
  } else if (plan.type === 'choice') {
    const parsed = recordValueSchema('choice', 'create').safeParse(raw);
    if (!parsed.success) issues.add(describeIssues(parsed.error.issues, where));
    else value = plan.options?.get(raw as string) ?? raw;
  } else if (plan.type === 'reference') {
    const parsed = recordIdInputSchema.safeParse(raw);
    if (!parsed.success) issues.add(describeIssues(parsed.error.issues, where));
    else value = recordIdToNumber(parsed.data);
  } else {
    // Either shape: stored values of some types keep the form they were sent in (icon, timeinterval).
    const parsed = recordValueSchema(plan.type, 'update').safeParse(raw);
    const created = parsed.success ? parsed : recordValueSchema(plan.type, 'create').safeParse(raw);
    if (created.success) value = created.data;
    else if (!parsed.success) issues.add(describeIssues(parsed.error.issues, where));
  }
  issues.throwIfAny();
  return typeof value === 'boolean' ? Number(value) : value;
}

function filterClause(
  plans: Plans,
  table: TableRow,
  filter: NonNullable<RecordListQuery['filter']>,
  params: unknown[],
): string[] {
  const names = Object.keys(filter).filter((k) => k !== 'id');
  requireKnown(names, plans, 'query.filter', table);
  const clauses: string[] = [];
  for (const [name, given] of Object.entries(filter)) {
    const wanted = Array.isArray(given) ? given : [given];
    if (name === 'id') {
      clauses.push('id IN (SELECT value FROM json_each(?))');
      params.push(JSON.stringify(parseIdsForFilter(wanted)));
      continue;
    }
    const plan = plans.byName.get(name)!;
    if (plan.readOnly) throw new BadRequestError(`query.filter.${name}: computed fields (type ${plan.type}) cannot be filtered`);
    const withNull = wanted.some((v) => v === null);
    const values = wanted.filter((v) => v !== null).map((v) => filterValue(plan, v, `query.filter.${name}`));
    const isArray = plan.type === 'multi' || plan.type === 'dmulti';
    const parts: string[] = [];
    if (values.length > 0) {
      parts.push(
        isArray
          ? `EXISTS (SELECT 1 FROM json_each(data, '${plan.path}') e WHERE e.value IN (SELECT value FROM json_each(?)))`
          : `json_extract(data, '${plan.path}') IN (SELECT value FROM json_each(?))`,
      );
      params.push(JSON.stringify(values));
    }
    if (withNull) {
      parts.push(
        isArray
          ? `coalesce(json_array_length(data, '${plan.path}'), 0) = 0`
          : `json_extract(data, '${plan.path}') IS NULL`,
      );
    }
    clauses.push(parts.length === 0 ? '0' : `(${parts.join(' OR ')})`);
  }
  return clauses;
}

function parseIdsForFilter(values: readonly unknown[]): number[] {
  return values.map((raw) => {
    const parsed = recordIdInputSchema.safeParse(raw);
    if (!parsed.success) throw new BadRequestError(describeIssues(parsed.error.issues, 'query.filter.id'));
    return recordIdToNumber(parsed.data);
  });
}

/** ORDER BY for a field: choices by their option order, everything else by stored value. */
function sortExpression(plan: FieldPlan, params: unknown[]): string {
  const value = `json_extract(data, '${plan.path}')`;
  if (plan.type === 'choice' && plan.orderedOptionIds.length > 0) {
    params.push(...plan.orderedOptionIds);
    const whens = plan.orderedOptionIds.map((_, i) => `WHEN ? THEN ${i}`).join(' ');
    return `CASE ${value} ${whens} ELSE (CASE WHEN ${value} IS NULL THEN NULL ELSE ${plan.orderedOptionIds.length} END) END`;
  }
  return value;
}

/**
 * One page of records: filtered (field → value or any of values; `id` by record id), sorted
 * (`name`, `-name`, `id`; ties by id ascending; default by id), values keyed by field name with
 * every selected field present (null when unset).
 */
export function listRecords(
  ctx: EmulatorContext,
  table: TableRow,
  fields: readonly FieldRow[],
  query: RecordListQuery = {},
): RecordPage {
  const plans = buildPlans(fields);
  const st = statements(ctx.db);
  const limit = query.limit ?? DEFAULT_PAGE_LIMIT;
  const offset = query.offset ?? 0;

  let selected = plans.list;
  if (query.fields && query.fields.length > 0) {
    // `id` is always returned; naming it is allowed unless a field is called so.
    const names = [...new Set(query.fields)].filter((n) => n !== 'id' || plans.byName.has('id'));
    requireKnown(names, plans, 'query.fields', table);
    const wanted = new Set(names);
    selected = plans.list.filter((p) => wanted.has(p.field.name));
  }

  const sortName = query.sort?.replace(/^-/, '');
  const descending = query.sort?.startsWith('-') === true;
  if (sortName !== undefined && sortName !== 'id') requireKnown([sortName], plans, 'query.sort', table);
  const sortPlan = sortName !== undefined && sortName !== 'id' ? plans.byName.get(sortName) : undefined;
  const hasFilter = query.filter !== undefined && Object.keys(query.filter).length > 0;

  let ids: number[];
  if (!hasFilter && sortPlan === undefined) {
    // Ids of the page from the index alone; the rows are fetched afterwards.
    const index = pageIndex(ctx.db, table.key);
    const sql = `SELECT id FROM records INDEXED BY "${index}" WHERE table_id = ${table.key}
      ORDER BY id ${descending ? 'DESC' : 'ASC'} LIMIT ? OFFSET ?`;
    ids = (dynamicStatement(ctx.db, sql).all(limit + 1, offset) as { id: number }[]).map((r) => r.id);
  } else {
    const params: unknown[] = [table.key];
    const where = ['table_id = ?', ...(hasFilter ? filterClause(plans, table, query.filter!, params) : [])];
    let order = `id ${descending ? 'DESC' : 'ASC'}`;
    if (sortPlan) order = `${sortExpression(sortPlan, params)} ${descending ? 'DESC' : 'ASC'}, id ASC`;
    params.push(limit + 1, offset);
    const sql = `SELECT id FROM records WHERE ${where.join(' AND ')} ORDER BY ${order} LIMIT ? OFFSET ?`;
    ids = (dynamicStatement(ctx.db, sql).all(...params) as { id: number }[]).map((r) => r.id);
  }

  const hasMore = ids.length > limit;
  if (hasMore) ids = ids.slice(0, limit);
  const rows = ids.length === 0 ? [] : (st.rowsByIds.all(JSON.stringify(ids)) as { id: number; data: string }[]);
  const byId = new Map(rows.map((r) => [r.id, r.data]));
  const data: ApiRecord[] = ids.map((id) => {
    const stored = JSON.parse(byId.get(id) ?? '{}') as Record<string, unknown>;
    const values: Record<string, unknown> = {};
    for (const plan of selected) values[plan.field.name] = stored[plan.field.id] ?? null;
    return { id: String(id), values };
  });
  return { data, page_info: { has_more: hasMore, limit, offset } };
}
