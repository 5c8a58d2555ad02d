import { ConversionFailure, checkedText, compare, equals, isTrue, toText } from './conversions.ts';
import { EvaluationError, type Position } from './diagnostics.ts';
import type { FunctionEnvironment } from './functions.ts';
import type { RequestBudget } from './request-budget.ts';
import { isRecordValue, type FieldInfo, type RecordValue, type TableScope, type Value } from './scope.ts';
import type { Node, Program } from './syntax.ts';

/**
 * Runs checked trees. Nothing here calls eval or builds code: it walks the tree. Every node and
 * every record a `select` visits costs a step from a budget shared by everything one top-level
 * evaluation triggers (function fields reading other function fields included), and the budget
 * also has a deadline, so a hostile expression ends with an EvaluationError instead of hanging
 * the emulator. The steps and the time are charged to the host's request budget too, which
 * bounds all the evaluations of one request together (request-budget.ts). Depth is bounded by the
 * parser (MAX_NESTING) and by the host for field chains.
 */

export const STEP_LIMIT = 200_000;
export const TIME_LIMIT_MS = 250;

export interface EvaluationHost extends FunctionEnvironment {
  /** What the evaluations of the host's request may spend together; none bounds only each one. */
  readonly request?: RequestBudget | undefined;
  /** A field's value as expressions see it (function fields computed, choices as option names). */
  readField(record: RecordValue, field: FieldInfo, budget: Budget): Value;
  /** Visits the table's records in id order until `visit` returns false. */
  eachRecord(table: TableScope, visit: (record: RecordValue) => boolean): void;
}

export class Budget {
  #steps: number;
  readonly #deadline: number;
  readonly #request: RequestBudget | undefined;
  #sinceClockCheck = 0;

  constructor(steps = STEP_LIMIT, millis = TIME_LIMIT_MS, request?: RequestBudget) {
    this.#steps = steps;
    this.#deadline = performance.now() + millis;
    this.#request = request;
  }

  charge(at: Position, steps = 1): void {
    this.#steps -= steps;
    if (this.#steps < 0) throw new EvaluationError(at, `the evaluation took more than ${STEP_LIMIT} steps and was stopped`);
    this.#request?.charge(steps);
    this.#sinceClockCheck += steps;
    if (this.#sinceClockCheck >= 512) {
      this.#sinceClockCheck = 0;
      const now = performance.now();
      if (now > this.#deadline) throw new EvaluationError(at, `the evaluation took longer than ${TIME_LIMIT_MS} ms and was stopped`);
      this.#request?.checkTime(now);
    }
  }

  /** Runs an evaluation on the request's account (its time counts there). */
  spend<T>(work: () => T): T {
    return this.#request ? this.#request.run(work) : work();
  }
}

/** A fresh budget for one top-level evaluation on the host, charged to the host's request. */
export function budgetFor(host: EvaluationHost): Budget {
  return new Budget(STEP_LIMIT, TIME_LIMIT_MS, host.request);
}

interface Frame {
  readonly host: EvaluationHost;
  readonly budget: Budget;
  /** The record the expression runs for (`this`). */
  readonly self: RecordValue;
  /** Inside a select's where: the candidate record bare names read. */
  readonly candidate: RecordValue | undefined;
}

/** The value of an expression for a record. Throws EvaluationError (only) when it fails. */
export function evaluate(program: Program, record: RecordValue, host: EvaluationHost, budget = budgetFor(host)): Value {
  if (program.kind !== 'expression') throw new Error('evaluate() runs expressions; triggers go through runTrigger()');
  return budget.spend(() => value(program.body, { host, budget, self: record, candidate: undefined }));
}

export interface TriggerWrite {
  readonly field: FieldInfo;
  readonly value: Value;
  readonly at: Position;
}

/**
 * A trigger's assignments in order. Each one sees the record as the earlier ones left it, so the
 * caller gets the writes to apply and `record` is not changed.
 */
export function runTrigger(program: Program, record: RecordValue, host: EvaluationHost, budget = budgetFor(host)): TriggerWrite[] {
  if (program.kind !== 'trigger') throw new Error('runTrigger() runs triggers');
  return budget.spend(() => {
    const writes: TriggerWrite[] = [];
    let current = record;
    for (const a of program.assignments) {
      const field = a.resolved!;
      const v = value(a.value, { host, budget, self: current, candidate: undefined });
      writes.push({ field, value: v, at: a.value.at });
      current = { ...current, data: { ...current.data, [field.id]: v } };
    }
    return writes;
  });
}

function fail(at: Position, message: string): never {
  throw new EvaluationError(at, message);
}

function describe(v: Value): string {
  if (isRecordValue(v)) return `a record of ${v.table.name}`;
  const text = JSON.stringify(v);
  return text.length > 60 ? `${text.slice(0, 57)}…` : text;
}

function numberOperand(v: Value, op: string, at: Position): number | null {
  if (v === null) return null;
  if (typeof v !== 'number') fail(at, `${op} takes numbers, not ${describe(v)}`);
  return v;
}

function value(node: Node, f: Frame): Value {
  f.budget.charge(node.at);
  switch (node.kind) {
    case 'number': case 'text': case 'boolean': return node.value;
    case 'null': return null;
    case 'this': return f.self;
    case 'field': return f.host.readField(f.candidate ?? f.self, node.resolved!, f.budget);
    case 'member': {
      const object = value(node.object, f);
      if (object === null) return null;
      if (Array.isArray(object)) {
        return (object as readonly Value[]).map((item) => {
          f.budget.charge(node.at);
          if (item === null) return null;
          if (!isRecordValue(item)) fail(node.at, `.${node.name} reads a field of records, not of ${describe(item)}`);
          return f.host.readField(item, node.resolved!, f.budget);
        });
      }
      if (!isRecordValue(object)) fail(node.at, `.${node.name} reads a field of a record, not of ${describe(object)}`);
      return f.host.readField(object, node.resolved!, f.budget);
    }
    case 'negate': {
      const n = numberOperand(value(node.operand, f), '-', node.at);
      return n === null ? null : -n;
    }
    case 'not': return !isTrue(value(node.operand, f));
    case 'if': return isTrue(value(node.condition, f)) ? value(node.then, f) : value(node.otherwise, f);
    case 'binary': return binary(node, f);
    case 'call': {
      const args = node.args.map((arg) => value(arg, f));
      try {
        return node.resolved!.run(args, f.host);
      } catch (e) {
        if (e instanceof ConversionFailure) fail(node.at, `${node.name}: ${e.message}`);
        throw e;
      }
    }
    case 'select': {
      const out: RecordValue[] = [];
      f.host.eachRecord(node.resolved!, (candidate) => {
        f.budget.charge(node.at);
        if (!node.where || isTrue(value(node.where, { ...f, candidate }))) out.push(candidate);
        return true;
      });
      return out;
    }
  }
}

function binary(node: Extract<Node, { kind: 'binary' }>, f: Frame): Value {
  // and/or look at their right side only when it decides the result.
  if (node.op === 'and') return isTrue(value(node.left, f)) && isTrue(value(node.right, f));
  if (node.op === 'or') return isTrue(value(node.left, f)) || isTrue(value(node.right, f));
  const l = value(node.left, f);
  const r = value(node.right, f);
  switch (node.op) {
    case '=': return equals(l, r);
    case '!=': return !equals(l, r);
    case '<': case '<=': case '>': case '>=': {
      const c = compare(l, r);
      if (c === undefined) return false;
      return node.op === '<' ? c < 0 : node.op === '<=' ? c <= 0 : node.op === '>' ? c > 0 : c >= 0;
    }
    case '+':
      if (typeof l === 'string' || typeof r === 'string') {
        try {
          return checkedText(toText(l) + toText(r));
        } catch (e) {
          if (e instanceof ConversionFailure) fail(node.at, e.message);
          throw e;
        }
      }
      break;
    default: break;
  }
  const a = numberOperand(l, node.op, node.at);
  const b = numberOperand(r, node.op, node.at);
  if (a === null || b === null) return null;
  switch (node.op) {
    case '+': return finite(a + b, node.at);
    case '-': return finite(a - b, node.at);
    case '*': return finite(a * b, node.at);
    case '/':
      if (b === 0) fail(node.at, 'division by zero');
      return finite(a / b, node.at);
    case '%':
      if (b === 0) fail(node.at, 'division by zero (in %)');
      return finite(a % b, node.at);
    default: return fail(node.at, `unknown operator ${node.op}`);
  }
}

function finite(n: number, at: Position): number {
  if (!Number.isFinite(n)) fail(at, 'the result is too large to be a number');
  return n;
}
