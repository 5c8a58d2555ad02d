import type { EmulatorContext } from '../context.ts';
import { describeDiagnostic, EvaluationError } from '../expression/diagnostics.ts';
import { evaluate, runTrigger } from '../expression/evaluator.ts';
import { isRecordValue, type RecordValue, type Value } from '../expression/scope.ts';
import { ForbiddenError } from '../errors.ts';
import type { ApiKeyGrant } from '../options.ts';
import { StoreHost, requestBudget, valueToJson } from './expression-host.ts';
import type { PendingRecord, RecordPlace } from './record-checks.ts';
import type { FieldPlan, FieldPlans } from './record-plans.ts';
import { INVALID, Issues, convertValue } from './record-values.ts';
import type { FieldRow, TableRow } from './schema-rows.ts';
import { allowsRole, roleOf, tableRoleRefusal } from './table-roles.ts';
import { tableExpressions, type Checked, type FieldExpressions, type TableExpressions } from './table-expressions.ts';

/** Records as stored before the request: id → the JSON text of their data. */
type StoredRows = ReadonlyMap<number, string>;

/**
 * The stages of a records request that run expressions, in the order the writes call them:
 * `{ $nx }` defaults of a create, `canWrite` guards, `onUpdate` triggers, the dynamic-choice
 * selection check; and on reads, function fields and `canRead` guards. One instance serves one
 * request (one actor, one host, selections evaluated once when they do not depend on the record).
 */
export class RecordExpressions {
  readonly #table: TableRow;
  readonly #plans: FieldPlans;
  readonly #host: StoreHost;
  readonly #expressions: TableExpressions;
  readonly #sharedSelections = new Map<string, ReadonlySet<string> | EvaluationError>();
  readonly #role: string;
  /** Fields whose `readRoles` leave the caller's role out: read as null. */
  readonly #unreadable: ReadonlySet<string>;
  /** Whether the caller's role may read the table's records (a create or update may not need to). */
  readonly #readsTable: boolean;
  /** Some field's `canWrite` or `writeRoles` may refuse the caller's writes. */
  readonly #guardsWrites: boolean;

  /** `budget`: what the request's evaluations may spend together (a fresh request budget by default). */
  constructor(
    ctx: EmulatorContext, table: TableRow, fields: readonly FieldRow[], plans: FieldPlans, actor: ApiKeyGrant,
    budget = requestBudget(),
  ) {
    this.#table = table;
    this.#plans = plans;
    this.#host = new StoreHost(ctx, actor, 'as-caller', budget);
    this.#expressions = tableExpressions(ctx, table, fields);
    this.#role = roleOf(actor);
    this.#unreadable = new Set(plans.list.filter((p) => !allowsRole(p.field.props.readRoles, this.#role)).map((p) => p.field.id));
    this.#readsTable = tableRoleRefusal(ctx, table, this.#role, 'read') === undefined;
    this.#guardsWrites = this.#expressions.hasWriteGuards || plans.list.some((p) => !allowsRole(p.field.props.writeRoles, this.#role));
  }

  /**
   * Whether the write stages read which fields each record sends ($nx defaults fill the others,
   * guards check the sent ones). When not, a bulk write need not collect them.
   */
  get readsSentFields(): boolean {
    return this.#expressions.hasDefaults || this.#guardsWrites;
  }

  /** Whether reads must evaluate something (function fields, canRead guards). */
  get affectsReads(): boolean {
    return this.#expressions.affectsReads || this.#unreadable.size > 0;
  }

  #of(plan: FieldPlan): FieldExpressions | undefined {
    return this.#expressions.byFieldId.get(plan.field.id);
  }

  #record(id: number | undefined, data: Readonly<Record<string, unknown>>): RecordValue {
    return { table: this.#expressions.scope, id, data };
  }

  // ---- writes -----------------------------------------------------------------------------------

  /** Fills fields absent from a create with their `{ $nx }` defaults, in field order. */
  applyDefaults(p: PendingRecord, sent: ReadonlySet<string>, place: RecordPlace, issues: Issues): void {
    if (!this.#expressions.hasDefaults) return;
    for (const plan of this.#plans.list) {
      const compiled = this.#of(plan)?.defaultValue;
      if (!compiled || sent.has(plan.field.name)) continue;
      const at = place(p.index, plan.field.name);
      const value = this.#run(compiled, this.#record(undefined, p.data), `${at}: the default expression failed`, issues);
      if (value === INVALID) continue;
      const stored = this.#toStored(plan, value, `${at}: the default expression gave`, issues);
      if (stored === INVALID) continue;
      p.touched.add(plan.field.id);
      if (stored === null) delete p.data[plan.field.id];
      else p.data[plan.field.id] = stored;
    }
  }

  /**
   * `canWrite` of every field a request sends: evaluated for the record as it was (a create: as it
   * will be). A guard that is false, fails or does not compile refuses the whole request (403).
   */
  checkWriteGuards(pending: readonly PendingRecord[], sentFields: readonly ReadonlySet<string>[], before: StoredRows | undefined, place: RecordPlace): void {
    if (!this.#guardsWrites) return;
    const denied: string[] = [];
    pending.forEach((p, i) => {
      for (const name of sentFields[i]!) {
        const plan = this.#plans.byName.get(name);
        if (plan && !allowsRole(plan.field.props.writeRoles, this.#role)) {
          denied.push(`${place(p.index, name)}: role ${this.#role} may not write field ${name} (writeRoles: ${plan.field.props.writeRoles!.join(', ')})`);
          continue;
        }
        const expressions = plan && this.#of(plan);
        if (!plan || !expressions || plan.field.props.canWrite === undefined) continue;
        const data = p.id === undefined ? p.data : (JSON.parse(before!.get(p.id)!) as Record<string, unknown>);
        if (!this.#host.allows(expressions, 'canWrite', this.#record(p.id, data))) {
          denied.push(`${place(p.index, name)}: canWrite of field ${name} denies this write`);
        }
      }
    });
    if (denied.length > 0) {
      const more = denied.length > 20 ? `; and ${denied.length - 20} more` : '';
      throw new ForbiddenError(denied.slice(0, 20).join('; ') + more);
    }
  }

  /**
   * `onUpdate` triggers of the fields whose value the update changed, in field order. Their
   * assignments join the same transaction; what they set does not fire triggers again.
   */
  runTriggers(pending: readonly PendingRecord[], before: StoredRows, place: RecordPlace, issues: Issues): void {
    if (!this.#expressions.hasTriggers) return;
    for (const p of pending) {
      const old = JSON.parse(before.get(p.id!)!) as Record<string, unknown>;
      const changed = this.#plans.list.filter(
        (plan) => p.touched.has(plan.field.id) && JSON.stringify(old[plan.field.id]) !== JSON.stringify(p.data[plan.field.id]),
      );
      for (const plan of changed) {
        const trigger = this.#of(plan)?.onUpdate;
        if (!trigger) continue;
        const at = `${place(p.index)} (onUpdate of ${plan.field.name})`;
        let writes;
        try {
          writes = runTrigger(trigger.program, this.#record(p.id, p.data), this.#host);
        } catch (e) {
          if (!(e instanceof EvaluationError)) throw e;
          issues.add(`${at}: the trigger failed: ${describeDiagnostic(e.toDiagnostic())}`);
          continue;
        }
        for (const write of writes) {
          const target = this.#plans.byName.get(write.field.name)!;
          const stored = this.#toStored(target, write.value, `${at}: ${write.field.name} := … gave`, issues);
          if (stored === INVALID) continue;
          p.touched.add(target.field.id);
          if (stored === null) delete p.data[target.field.id];
          else p.data[target.field.id] = stored;
        }
      }
    }
  }

  /** dchoice/dmulti values must be ids of records their selection gives for the record. */
  checkSelections(pending: readonly PendingRecord[], place: RecordPlace, issues: Issues): void {
    for (const plan of this.#plans.list) {
      if (plan.type !== 'dchoice' && plan.type !== 'dmulti') continue;
      const expressions = this.#of(plan);
      for (const p of pending) {
        const value = p.data[plan.field.id];
        if (!p.touched.has(plan.field.id) || value === undefined || value === null) continue;
        const ids = (Array.isArray(value) ? value : [value]) as string[];
        if (ids.length === 0) continue;
        const at = place(p.index, plan.field.name);
        const selection = expressions?.selection;
        if (!selection) {
          issues.add(`${at}: field ${plan.field.name} has no valid selection expression (see its expressionErrors), so no record can be chosen`);
          continue;
        }
        const allowed = this.#selectable(plan, selection, p);
        if (allowed instanceof EvaluationError) {
          issues.add(`${at}: the selection of field ${plan.field.name} failed: ${describeDiagnostic(allowed.toDiagnostic())}`);
          continue;
        }
        const outside = ids.filter((id) => !allowed.has(id));
        if (outside.length > 0) {
          issues.add(`${at}: record${outside.length === 1 ? '' : 's'} ${outside.join(', ')} ${outside.length === 1 ? 'is' : 'are'} not among the records the selection of ${plan.field.name} offers`);
        }
      }
    }
  }

  #selectable(plan: FieldPlan, selection: Checked & { perRecord: boolean }, p: PendingRecord): ReadonlySet<string> | EvaluationError {
    const shared = !selection.perRecord;
    if (shared) {
      const cached = this.#sharedSelections.get(plan.field.id);
      if (cached) return cached;
    }
    let result: ReadonlySet<string> | EvaluationError;
    try {
      const value = evaluate(selection.program, this.#record(p.id, p.data), this.#host);
      const items = Array.isArray(value) ? (value as readonly Value[]) : [value];
      result = new Set(items.filter(isRecordValue).map((r) => String(r.id)));
    } catch (e) {
      if (!(e instanceof EvaluationError)) throw e;
      result = e;
    }
    if (shared) this.#sharedSelections.set(plan.field.id, result);
    return result;
  }

  #run(compiled: Checked, record: RecordValue, failure: string, issues: Issues): Value | typeof INVALID {
    try {
      return evaluate(compiled.program, record, this.#host);
    } catch (e) {
      if (!(e instanceof EvaluationError)) throw e;
      issues.add(`${failure}: ${describeDiagnostic(e.toDiagnostic())}`);
      return INVALID;
    }
  }

  /**
   * An expression's value as a stored value of the field, through the same checks as a request's.
   * A value that fits neither shape is named in the fault: `<gave> "abc", which does not fit: …`.
   */
  #toStored(plan: FieldPlan, value: Value, gave: string, issues: Issues): unknown {
    const input = toInput(plan, value);
    const created = convertValue(plan, input, 'create', '', new Issues());
    if (created !== INVALID) return created;
    return convertValue(plan, input, 'update', `${gave} ${shortJson(input)}, which does not fit`, issues);
  }

  // ---- reads ------------------------------------------------------------------------------------

  /**
   * A field's value as the caller reads it: function fields computed (null when they fail),
   * values behind a `canRead` that does not allow this record hidden as null.
   */
  readValue(plan: FieldPlan, id: number, data: Readonly<Record<string, unknown>>): unknown {
    if (this.#unreadable.has(plan.field.id)) return null;
    const expressions = this.#of(plan);
    const stored = data[plan.field.id] ?? null;
    if (!expressions) return stored;
    const record = this.#record(id, data);
    if (plan.field.props.canRead !== undefined && !this.#host.allows(expressions, 'canRead', record)) return null;
    if (plan.type !== 'function') return stored;
    try {
      return valueToJson(this.#host.compute(record, expressions.field));
    } catch (e) {
      if (e instanceof EvaluationError) return null;
      throw e;
    }
  }

  /**
   * Whether the caller reads the field of a stored record at all, as the records list would show
   * it: the table's role lists, the field's `readRoles` and its `canRead` for that record. `data`
   * is asked for only when a guard needs it.
   */
  readsValue(plan: FieldPlan, id: number | undefined, data: () => Readonly<Record<string, unknown>>): boolean {
    if (!this.#readsTable || this.#unreadable.has(plan.field.id)) return false;
    if (plan.field.props.canRead === undefined) return true;
    const expressions = this.#of(plan);
    return expressions !== undefined && this.#host.allows(expressions, 'canRead', this.#record(id, data()));
  }

  /** Whether reading the field involves an expression (then filter and sort run in memory). */
  isEvaluated(plan: FieldPlan): boolean {
    return plan.type === 'function' || this.#unreadable.has(plan.field.id)
      || (this.#of(plan) !== undefined && plan.field.props.canRead !== undefined);
  }
}

const SHOWN_CHARACTERS = 100;

/** A value in a message: its JSON, cut short (an expression may give a text of a million characters). */
function shortJson(value: unknown): string {
  const json = JSON.stringify(value) ?? 'null';
  return json.length <= SHOWN_CHARACTERS ? json : `${json.slice(0, SHOWN_CHARACTERS)}…`;
}

/** An expression value in request form: records become their ids (numbers for references). */
function toInput(plan: FieldPlan, value: Value): unknown {
  if (isRecordValue(value) && plan.type === 'reference') return value.id ?? null;
  return valueToJson(value);
}
