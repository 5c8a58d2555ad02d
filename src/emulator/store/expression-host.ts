import type { EmulatorContext } from '../context.ts';
import { EvaluationError } from '../expression/diagnostics.ts';
import { Budget, evaluate, type EvaluationHost } from '../expression/evaluator.ts';
import { isRecordValue, type FieldInfo, type RecordValue, type TableScope, type Value } from '../expression/scope.ts';
import type { ApiKeyGrant } from '../options.ts';
import type { StoreFieldInfo, StoreTableScope } from './expression-scope.ts';
import { dynamicStatement } from './record-statements.ts';
import { tableExpressions } from './table-expressions.ts';
import { roleOf } from './table-roles.ts';

/**
 * The store as expressions see it while they run: field values in their expression form (choices
 * by option name, function fields computed on demand), the records a `select` walks, the clock
 * and the caller's role. One host serves one request.
 */

/** Function fields reading function fields: at most this deep (a cycle ends here too). */
export const MAX_FUNCTION_CHAIN = 16;
const SELECT_CHUNK = 500;

/** A stored value in expression form. */
export function storedToValue(field: StoreFieldInfo, stored: unknown): Value {
  if (stored === undefined || stored === null) return null;
  if (field.optionNames) {
    if (Array.isArray(stored)) return stored.map((id: string) => field.optionNames!.get(id) ?? id);
    return field.optionNames.get(stored as string) ?? (stored as string);
  }
  if (typeof stored === 'object' && !Array.isArray(stored)) return JSON.stringify(stored);
  return stored as Value;
}

/** A computed value in the form the API returns: records become their ids. */
export function valueToJson(value: Value): unknown {
  if (Array.isArray(value)) return (value as readonly Value[]).map(valueToJson);
  if (isRecordValue(value)) return value.id === undefined ? null : String(value.id);
  return value;
}

export class StoreHost implements EvaluationHost {
  readonly #ctx: EmulatorContext;
  readonly #role: string;
  readonly #computing: string[] = [];

  constructor(ctx: EmulatorContext, actor: ApiKeyGrant) {
    this.#ctx = ctx;
    this.#role = roleOf(actor);
  }

  now(): number {
    return this.#ctx.clock.now();
  }

  userRole(): string {
    return this.#role;
  }

  readField(record: RecordValue, field: FieldInfo, budget: Budget): Value {
    const info = field as StoreFieldInfo;
    if (info.fieldType !== 'function') return storedToValue(info, record.data[info.id]);
    return this.compute(record, info, budget);
  }

  /** A function field's value for a record; null when its expression does not compile. */
  compute(record: RecordValue, field: StoreFieldInfo, budget = new Budget()): Value {
    const table = record.table as StoreTableScope;
    const compiled = tableExpressions(this.#ctx, table.row, table.fields.map((f) => f.row)).byFieldId.get(field.id)?.compute;
    if (!compiled) return null;
    const key = `${field.id}:${record.id ?? 'new'}`;
    if (this.#computing.includes(key)) throw new EvaluationError({ line: 1, column: 1 }, `field ${field.name} depends on itself`);
    if (this.#computing.length >= MAX_FUNCTION_CHAIN) {
      throw new EvaluationError({ line: 1, column: 1 }, `function fields read each other more than ${MAX_FUNCTION_CHAIN} deep`);
    }
    this.#computing.push(key);
    try {
      return evaluate(compiled.program, record, this, budget);
    } finally {
      this.#computing.pop();
    }
  }

  eachRecord(table: TableScope, visit: (record: RecordValue) => boolean): void {
    // Chunks by id instead of one open cursor: a visit may run queries of its own.
    const sql = `SELECT id, data FROM records WHERE table_id = ? AND id > ? ORDER BY id LIMIT ${SELECT_CHUNK}`;
    let after = 0;
    for (;;) {
      const rows = dynamicStatement(this.#ctx.db, sql).all(table.key, after) as { id: number; data: string }[];
      for (const row of rows) {
        if (!visit({ table, id: row.id, data: JSON.parse(row.data) as Record<string, unknown> })) return;
      }
      if (rows.length < SELECT_CHUNK) return;
      after = rows[rows.length - 1]!.id;
    }
  }
}
