import { formatPath } from '../../api/index.ts';
import type { Db } from './db.ts';
import type { FieldPlan, FieldPlans } from './record-plans.ts';
import { dynamicStatement, recordStatements } from './record-statements.ts';
import { isEmpty, type Issues } from './record-values.ts';
import type { TableRow } from './schema-rows.ts';

/**
 * The checks of a whole records request against the table: unknown fields, references, unique
 * and required fields. They come after each value is converted (record-values.ts) and are
 * sequenced by the writes (record-store.ts).
 */

// ---- checks of a whole request ---------------------------------------------------------------

/**
 * Names a record of a request, or one of its values, in error messages: `body.records[3].price`
 * for a JSON body, `line 12, column 3 (price)` for a CSV import.
 */
export type RecordPlace = (index: number, fieldName?: string) => string;

/** The places of records under a path: `where[index]` and `where[index].field`. */
export function placeUnder(where: string): RecordPlace {
  return (index, fieldName) => formatPath(where, fieldName === undefined ? [index] : [index, fieldName]);
}

export interface PendingRecord {
  /** Index of the record in the request. */
  index: number;
  /** Record id (updates). */
  id: number | undefined;
  data: Record<string, unknown>;
  /** Keys set by this request (updates: only those can break uniqueness against the table). */
  touched: Set<string>;
}

export function reportUnknown(names: string[], where: string, table: TableRow, issues: Issues): void {
  if (names.length === 0) return;
  const list = names.map((n) => JSON.stringify(n)).join(', ');
  issues.add(`${where}: unknown field${names.length === 1 ? '' : 's'} ${list} in table ${table.moduleName}.${table.name}`);
}

/** Every reference points at an existing record of the referenced table. */
export function checkReferences(db: Db, plans: FieldPlans, pending: readonly PendingRecord[], place: RecordPlace, issues: Issues): void {
  const st = recordStatements(db);
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
        issues.add(`${place(p.index, plan.field.name)}: record ${v} does not exist in ${target}`);
      }
    }
  }
}

function uniqueKey(value: unknown): string {
  return typeof value === 'boolean' ? String(Number(value)) : JSON.stringify(value);
}

/** Whether the caller reads a field of a record (its data given on demand), as a records list would show it. */
export type ReadsValue = (plan: FieldPlan, id: number | undefined, data: () => Readonly<Record<string, unknown>>) => boolean;

/**
 * A clash with a value the caller cannot read: refused all the same (uniqueness holds for
 * everyone), but neither the record holding it nor its value is named.
 */
function hiddenClash(at: string, plan: FieldPlan): string {
  return `${at}: this value of unique field ${plan.field.name} already exists in another record`;
}

/**
 * Unique values repeat neither within the request nor against the rest of the table, looked up
 * through each field's value index (`valueIndex` makes it, record-statements.ts). A clash names
 * the record holding the value only when `readsValue` says the caller reads it there.
 */
export function checkUnique(
  db: Db, table: TableRow, plans: FieldPlans, pending: readonly PendingRecord[], place: RecordPlace, issues: Issues,
  valueIndex: (plan: FieldPlan) => string, readsValue: ReadsValue,
): void {
  const inRequest = new Set(pending.map((p) => p.id).filter((id) => id !== undefined));
  for (const plan of plans.list) {
    if (!plan.unique || plan.readOnly) continue;
    const key = plan.field.id;
    const seen = new Map<string, PendingRecord>();
    const toCheck = new Map<string, PendingRecord[]>();
    for (const p of pending) {
      const v = p.data[key];
      if (isEmpty(v)) continue;
      const k = uniqueKey(v);
      const first = seen.get(k);
      if (first && (p.touched.has(key) || first.touched.has(key))) {
        // One of the two may hold its value from before the request, in a field the caller cannot read.
        const holder = !first.touched.has(key) ? first : !p.touched.has(key) ? p : undefined;
        if (holder && !readsValue(plan, holder.id, () => holder.data)) {
          issues.add(hiddenClash(place((holder === p ? first : p).index, plan.field.name), plan));
        } else {
          issues.add(
            `${place(p.index, plan.field.name)}: value ${JSON.stringify(v)} of unique field ${plan.field.name} repeats ${place(first.index)}`,
          );
        }
        continue;
      }
      seen.set(k, p);
      if (!p.touched.has(key)) continue;
      const same = toCheck.get(k);
      if (same) same.push(p);
      else toCheck.set(k, [p]);
    }
    if (toCheck.size === 0) continue;
    const index = valueIndex(plan);
    const values = [...toCheck.values()].map((ps) => ps[0]!.data[key]);
    const sql = `SELECT id, data -> '${plan.path}' AS v, data FROM records INDEXED BY "${index}"
      WHERE table_id = ${table.key} AND json_extract(data, '${plan.path}') IN (SELECT value FROM json_each(?))`;
    const rows = dynamicStatement(db, sql).all(JSON.stringify(values)) as { id: number; v: string; data: string }[];
    for (const row of rows) {
      if (inRequest.has(row.id)) continue; // its final value is checked above
      const k = uniqueKey(JSON.parse(row.v));
      const named = readsValue(plan, row.id, () => JSON.parse(row.data) as Record<string, unknown>);
      for (const p of toCheck.get(k) ?? []) {
        const at = place(p.index, plan.field.name);
        issues.add(named
          ? `${at}: value ${JSON.stringify(p.data[key])} of unique field ${plan.field.name} already exists in record ${row.id}`
          : hiddenClash(at, plan));
      }
    }
  }
}

export function checkRequired(plans: FieldPlans, p: PendingRecord, mode: 'create' | 'update', place: RecordPlace, issues: Issues): void {
  for (const plan of plans.list) {
    if (!plan.required || plan.readOnly) continue;
    // On update only a value cleared by this request is an error: older gaps stay readable.
    if (mode === 'update' && !p.touched.has(plan.field.id)) continue;
    if (isEmpty(p.data[plan.field.id])) {
      issues.add(
        mode === 'create'
          ? `${place(p.index, plan.field.name)}: field ${plan.field.name} is required`
          : `${place(p.index, plan.field.name)}: field ${plan.field.name} is required and cannot be cleared`,
      );
    }
  }
}
