import {
  DEFAULT_PAGE_LIMIT, describeIssues, recordIdInputSchema, recordIdToNumber, recordValueSchema,
  type ApiRecord, type PageInfo, type RecordListQuery,
} from '../../api/index.ts';
import type { EmulatorContext } from '../context.ts';
import { BadRequestError } from '../errors.ts';
import type { ApiKeyGrant } from '../options.ts';
import { RecordExpressions } from './record-expressions.ts';
import { buildFieldPlans, type FieldPlan, type FieldPlans } from './record-plans.ts';
import { dynamicStatement, pageIndex, recordStatements } from './record-statements.ts';
import { Issues } from './record-values.ts';
import type { FieldRow, TableRow } from './schema-rows.ts';
import { SYSTEM_ACTOR } from './table-roles.ts';

/**
 * Listing records: field selection, filter, sort and one page. Read-only, so separate from the
 * writes in record-store.ts. Stored values are filtered and sorted in SQL; values that come from
 * an expression (function fields, fields behind `canRead`) are filtered and sorted in memory, as
 * the caller reads them.
 */

export interface RecordPage {
  readonly page_info: PageInfo;
  /**
   * The page's records in order, each read and computed as it is reached, so no more than one is
   * held at a time (a page may hold 100 records of 6 MB each). Walk it at once: it reads the store.
   */
  records(): Generator<ApiRecord>;
}

function requireKnown(names: readonly string[], plans: FieldPlans, where: string, table: TableRow): void {
  const unknown = names.filter((n) => !plans.byName.has(n));
  if (unknown.length === 0) return;
  const list = unknown.map((n) => JSON.stringify(n)).join(', ');
  throw new BadRequestError(`${where}: unknown field${unknown.length === 1 ? '' : 's'} ${list} in table ${table.moduleName}.${table.name}`);
}

/**
 * A choice or multi filter value that names no current option. It matches nothing, also in
 * records that still hold the id of an option since removed: those read as no option.
 */
const NO_OPTION = Symbol('no option');

/**
 * A filter value in stored form, read like an update value or else like a create value; a
 * choice or multi value naming no option is NO_OPTION.
 */
function filterValue(plan: FieldPlan, raw: unknown, where: string): unknown {
  const issues = new Issues();
  let value: unknown;
  if (plan.type === 'multi' || plan.type === 'dmulti') {
    // A scalar matches records whose array holds it.
    const parsed = recordValueSchema(plan.type, 'update').safeParse([raw]);
    if (!parsed.success) issues.add(describeIssues(parsed.error.issues, where).replace(/\[0\]/, ''));
    else value = plan.type === 'multi' ? (plan.options?.get(raw as string) ?? NO_OPTION) : (parsed.data as string[])[0];
  } else if (plan.type === 'choice') {
    const parsed = recordValueSchema('choice', 'create').safeParse(raw);
    if (!parsed.success) issues.add(describeIssues(parsed.error.issues, where));
    else value = plan.options?.get(raw as string) ?? NO_OPTION;
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
  return value;
}

/** SQLite's JSON functions read JSON true/false as 1/0. */
function sqlValue(value: unknown): unknown {
  return typeof value === 'boolean' ? Number(value) : value;
}

interface MemoryCondition {
  readonly plan: FieldPlan;
  readonly values: readonly unknown[];
  readonly withNull: boolean;
}

function isEmptyValue(value: unknown): boolean {
  return value === null || value === undefined || value === '' || (Array.isArray(value) && value.length === 0);
}

function sameValue(a: unknown, b: unknown): boolean {
  return a === b || JSON.stringify(a) === JSON.stringify(b);
}

/** A condition on a value read through an expression, checked in memory. */
function holds(condition: MemoryCondition, value: unknown): boolean {
  if (isEmptyValue(value)) return condition.withNull;
  if (Array.isArray(value)) return condition.values.some((w) => value.some((item) => sameValue(item, w)));
  return condition.values.some((w) => sameValue(value, w));
}

function filterClause(
  plans: FieldPlans,
  table: TableRow,
  filter: NonNullable<RecordListQuery['filter']>,
  params: unknown[],
  expressions: RecordExpressions,
  inMemory: MemoryCondition[],
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
    const withNull = wanted.some((v) => v === null);
    if (plan.type === 'function') {
      // A computed value is compared as the API returns it.
      inMemory.push({ plan, values: wanted.filter((v) => v !== null), withNull });
      continue;
    }
    if (plan.readOnly) throw new BadRequestError(`query.filter.${name}: computed fields (type ${plan.type}) cannot be filtered`);
    const values = wanted.filter((v) => v !== null).map((v) => filterValue(plan, v, `query.filter.${name}`)).filter((v) => v !== NO_OPTION);
    if (expressions.isEvaluated(plan)) {
      inMemory.push({ plan, values, withNull });
      continue;
    }
    const isArray = plan.type === 'multi' || plan.type === 'dmulti';
    const parts: string[] = [];
    if (values.length > 0) {
      parts.push(
        isArray
          ? `EXISTS (SELECT 1 FROM json_each(data, '${plan.path}') e WHERE e.value IN (SELECT value FROM json_each(?)))`
          : `json_extract(data, '${plan.path}') IN (SELECT value FROM json_each(?))`,
      );
      params.push(JSON.stringify(values.map(sqlValue)));
    }
    if (withNull) parts.push(emptySql(plan));
    clauses.push(parts.length === 0 ? '0' : `(${parts.join(' OR ')})`);
  }
  return clauses;
}

/** Order of values read through expressions: empty first, then numbers and booleans, then text. */
function compareRead(a: unknown, b: unknown): number {
  const rank = (v: unknown) => (isEmptyValue(v) ? 0 : typeof v === 'number' || typeof v === 'boolean' ? 1 : 2);
  const ra = rank(a);
  const rb = rank(b);
  if (ra !== rb || ra === 0) return ra - rb;
  if (ra === 1) return Number(a) - Number(b);
  const ta = typeof a === 'string' ? a : JSON.stringify(a);
  const tb = typeof b === 'string' ? b : JSON.stringify(b);
  return ta < tb ? -1 : ta > tb ? 1 : 0;
}

const SCAN_CHUNK = 1000;

/**
 * Ids of the records matching the SQL conditions and the in-memory ones, walking the table in
 * chunks of ids (evaluating may run queries of its own, so no cursor stays open). With a sort on
 * an evaluated field, the ids come sorted by it (ties by id); otherwise in id order.
 */
function scanInMemory(
  ctx: EmulatorContext,
  where: readonly string[],
  params: readonly unknown[],
  conditions: readonly MemoryCondition[],
  sortBy: FieldPlan | undefined,
  descending: boolean,
  expressions: RecordExpressions,
): number[] {
  const sql = `SELECT id, data FROM records WHERE ${where.join(' AND ')} AND id > ? ORDER BY id LIMIT ${SCAN_CHUNK}`;
  const matches: { id: number; key: unknown }[] = [];
  let after = 0;
  for (;;) {
    const rows = dynamicStatement(ctx.db, sql).all(...params, after) as { id: number; data: string }[];
    for (const row of rows) {
      const data = JSON.parse(row.data) as Record<string, unknown>;
      if (!conditions.every((c) => holds(c, expressions.readValue(c.plan, row.id, data)))) continue;
      matches.push({ id: row.id, key: sortBy ? expressions.readValue(sortBy, row.id, data) : undefined });
    }
    if (rows.length < SCAN_CHUNK) break;
    after = rows[rows.length - 1]!.id;
  }
  if (sortBy) matches.sort((a, b) => (descending ? -compareRead(a.key, b.key) : compareRead(a.key, b.key)) || a.id - b.id);
  return matches.map((m) => m.id);
}

function parseIdsForFilter(values: readonly unknown[]): number[] {
  return values.map((raw) => {
    const parsed = recordIdInputSchema.safeParse(raw);
    if (!parsed.success) throw new BadRequestError(describeIssues(parsed.error.issues, 'query.filter.id'));
    return recordIdToNumber(parsed.data);
  });
}

/**
 * ORDER BY for a field: choices by their option order, everything else by stored value. Empty
 * values (absent, null, "", []) are NULL, which SQLite puts first ascending and last descending.
 */
function sortExpression(plan: FieldPlan, params: unknown[]): string {
  const value = `json_extract(data, '${plan.path}')`;
  if (plan.type === 'choice' && plan.orderedOptionIds.length > 0) {
    params.push(...plan.orderedOptionIds);
    const whens = plan.orderedOptionIds.map((_, i) => `WHEN ? THEN ${i}`).join(' ');
    return `CASE ${value} ${whens} ELSE (CASE WHEN ${value} IS NULL THEN NULL ELSE ${plan.orderedOptionIds.length} END) END`;
  }
  return `CASE WHEN ${emptySql(plan)} THEN NULL ELSE ${value} END`;
}

/**
 * Whether a stored value is empty (absent, null, "" or []), in SQL. An array comes out of
 * json_extract as its JSON text, so "[]" is told by its type, not its text.
 */
function emptySql(plan: FieldPlan): string {
  const value = `json_extract(data, '${plan.path}')`;
  const emptyArray = `(json_type(data, '${plan.path}') = 'array' AND json_array_length(data, '${plan.path}') = 0)`;
  return `(${value} IS NULL OR ${value} = '' OR ${emptyArray})`;
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
  actor: ApiKeyGrant = SYSTEM_ACTOR,
): RecordPage {
  const plans = buildFieldPlans(fields);
  const st = recordStatements(ctx.db);
  const expressions = new RecordExpressions(ctx, table, fields, plans, actor);
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
  let hasMore: boolean;
  if (!hasFilter && sortPlan === undefined) {
    // Ids of the page from the index alone; the rows are fetched afterwards.
    const index = pageIndex(ctx.db, table.key);
    const sql = `SELECT id FROM records INDEXED BY "${index}" WHERE table_id = ${table.key}
      ORDER BY id ${descending ? 'DESC' : 'ASC'} LIMIT ? OFFSET ?`;
    ids = (dynamicStatement(ctx.db, sql).all(limit + 1, offset) as { id: number }[]).map((r) => r.id);
  } else {
    const params: unknown[] = [table.key];
    const inMemory: MemoryCondition[] = [];
    const where = ['table_id = ?', ...(hasFilter ? filterClause(plans, table, query.filter!, params, expressions, inMemory) : [])];
    const sortInMemory = sortPlan !== undefined && (sortPlan.type === 'function' || expressions.isEvaluated(sortPlan));
    if (inMemory.length > 0 || sortInMemory) {
      let matching = scanInMemory(ctx, where, params, inMemory, sortInMemory ? sortPlan : undefined, descending, expressions);
      if (!sortInMemory) {
        // Sorting by a stored value stays in SQL, over the matching ids.
        const order: unknown[] = [];
        const by = sortPlan ? `${sortExpression(sortPlan, order)} ${descending ? 'DESC' : 'ASC'}, id ASC` : `id ${descending ? 'DESC' : 'ASC'}`;
        const sql = `SELECT id FROM records WHERE id IN (SELECT value FROM json_each(?)) ORDER BY ${by}`;
        matching = (dynamicStatement(ctx.db, sql).all(JSON.stringify(matching), ...order) as { id: number }[]).map((r) => r.id);
      }
      ids = matching.slice(offset, offset + limit + 1);
    } else {
      let order = `id ${descending ? 'DESC' : 'ASC'}`;
      if (sortPlan) order = `${sortExpression(sortPlan, params)} ${descending ? 'DESC' : 'ASC'}, id ASC`;
      params.push(limit + 1, offset);
      const sql = `SELECT id FROM records WHERE ${where.join(' AND ')} ORDER BY ${order} LIMIT ? OFFSET ?`;
      ids = (dynamicStatement(ctx.db, sql).all(...params) as { id: number }[]).map((r) => r.id);
    }
  }

  hasMore = ids.length > limit;
  if (hasMore) ids = ids.slice(0, limit);
  const evaluated = expressions.affectsReads;
  function* records(): Generator<ApiRecord> {
    for (const id of ids) {
      const row = st.rowById.get(id) as { data: string } | undefined;
      const stored = JSON.parse(row?.data ?? '{}') as Record<string, unknown>;
      // Null prototype: a field may be called `__proto__`, which on a plain object would set the
      // prototype instead of holding the value.
      const values: Record<string, unknown> = Object.create(null);
      for (const plan of selected) values[plan.field.name] = evaluated ? expressions.readValue(plan, id, stored) : (stored[plan.field.id] ?? null);
      yield { id: String(id), values };
    }
  }
  return { page_info: { has_more: hasMore, limit, offset }, records };
}
