import type { EmulatorContext } from '../context.ts';
import { EvaluationError } from '../expression/diagnostics.ts';
import { BadRequestError } from '../errors.ts';
import { Budget, budgetFor, evaluate, type EvaluationHost } from '../expression/evaluator.ts';
import { REQUEST_STEP_LIMIT, REQUEST_TIME_LIMIT_MS, RequestBudget } from '../expression/request-budget.ts';
import { isRecordValue, type FieldInfo, type RecordValue, type TableScope, type Value } from '../expression/scope.ts';
import type { ApiKeyGrant } from '../options.ts';
import type { StoreFieldInfo, StoreTableScope } from './expression-scope.ts';
import { dynamicStatement } from './record-statements.ts';
import { tableExpressions, type FieldExpressions } from './table-expressions.ts';
import { allowsRole, roleOf, tableRoleRefusal } from './table-roles.ts';

/**
 * The store as expressions see it while they run: field values in their expression form (choices
 * by option name, function fields computed on demand), the records a `select` walks, the clock
 * and the caller's role. One host serves one request.
 *
 * Expressions read as the caller reads: a field whose `readRoles` leave the caller's role out, or
 * whose `canRead` does not allow the record, reads as null, and a table whose role lists do not
 * let the role read its records (the module's `openRoles`, the table's `readRoles`) has no records
 * for `select`, exactly as the records list shows them to that caller. So no expression, whoever
 * wrote it, shows a caller more than the caller may read. Guards are the exception: they decide
 * access, are set only with the permission grant, and run on `forGuards`, which reads everything.
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

/** The budget of one request's evaluations; running out of it is 400. */
export function requestBudget(): RequestBudget {
  return new RequestBudget(exhausted);
}

/** A request whose evaluations ran out of its budget: the client is told what to send instead. */
function exhausted(reason: string): Error {
  return new BadRequestError(
    `the expressions of this request took ${reason} together and were stopped (a request may spend ` +
    `${REQUEST_STEP_LIMIT} steps and ${REQUEST_TIME_LIMIT_MS} ms evaluating function fields, guards, defaults, ` +
    'triggers and selections): evaluate fewer of them per request (fewer records or fields, a narrower filter, ' +
    'no sort or filter on a costly function field), or make the expressions cheaper',
  );
}

/** Whose access an evaluation reads with: the caller's, or every value (guards). */
type Reads = 'as-caller' | 'everything';

export class StoreHost implements EvaluationHost {
  readonly #ctx: EmulatorContext;
  readonly #actor: ApiKeyGrant;
  readonly #role: string;
  readonly #reads: Reads;
  readonly #computing: string[] = [];
  /** Whether the role may read a table's records, by table key (looked up once per request). */
  readonly #readableTables = new Map<number, boolean>();
  #guardHost: StoreHost | undefined;

  /** What the request's evaluations may spend together, guards included. */
  readonly request: RequestBudget;

  constructor(ctx: EmulatorContext, actor: ApiKeyGrant, reads: Reads = 'as-caller', request = requestBudget()) {
    this.#ctx = ctx;
    this.#actor = actor;
    this.#role = roleOf(actor);
    this.#reads = reads;
    this.request = request;
  }

  /** The host guards run on: the same caller, role and request budget, reading every value. */
  get forGuards(): StoreHost {
    if (this.#reads === 'everything') return this;
    this.#guardHost ??= new StoreHost(this.#ctx, this.#actor, 'everything', this.request);
    return this.#guardHost;
  }

  /**
   * Whether a guard of the field allows the record: false when it is false, fails, or no longer
   * compiles; true when the field has no such guard.
   */
  allows(expressions: FieldExpressions, guard: 'canRead' | 'canWrite', record: RecordValue, budget?: Budget): boolean {
    if (expressions.brokenGuards.has(guard)) return false;
    const compiled = expressions[guard];
    if (!compiled) return true;
    try {
      return evaluate(compiled.program, record, this.forGuards, budget) === true;
    } catch (e) {
      if (e instanceof EvaluationError) return false;
      throw e;
    }
  }

  #mayReadField(record: RecordValue, field: StoreFieldInfo, budget: Budget): boolean {
    if (this.#reads === 'everything') return true;
    const props = field.row.props;
    if (!allowsRole(props.readRoles, this.#role)) return false;
    if (props.canRead === undefined) return true;
    const expressions = this.#expressionsOf(record.table as StoreTableScope).byFieldId.get(field.id);
    return expressions !== undefined && this.allows(expressions, 'canRead', record, budget);
  }

  #mayReadTable(table: StoreTableScope): boolean {
    if (this.#reads === 'everything') return true;
    let readable = this.#readableTables.get(table.key);
    if (readable === undefined) {
      readable = tableRoleRefusal(this.#ctx, table.row, this.#role, 'read') === undefined;
      this.#readableTables.set(table.key, readable);
    }
    return readable;
  }

  #expressionsOf(table: StoreTableScope) {
    return tableExpressions(this.#ctx, table.row, table.fields.map((f) => f.row));
  }

  now(): number {
    return this.#ctx.clock.now();
  }

  userRole(): string {
    return this.#role;
  }

  readField(record: RecordValue, field: FieldInfo, budget: Budget): Value {
    const info = field as StoreFieldInfo;
    if (!this.#mayReadField(record, info, budget)) return null;
    if (info.fieldType !== 'function') return storedToValue(info, record.data[info.id]);
    return this.compute(record, info, budget);
  }

  /** A function field's value for a record; null when its expression does not compile. */
  compute(record: RecordValue, field: StoreFieldInfo, budget = budgetFor(this)): Value {
    const compiled = this.#expressionsOf(record.table as StoreTableScope).byFieldId.get(field.id)?.compute;
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
    if (!this.#mayReadTable(table as StoreTableScope)) return;
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
