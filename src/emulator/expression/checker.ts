import type { ExpressionError } from '../../api/index.ts';
import { diagnostic, type Position } from './diagnostics.ts';
import { FUNCTIONS } from './functions.ts';
import {
  fits, isListType, isRecordType, typeName, type ExpressionScope, type FieldInfo, type TableScope, type ValueType,
} from './scope.ts';
import type { Node, Program } from './syntax.ts';

/**
 * The static check: resolves every name (fields, tables, functions) against the scope, infers the
 * type of every node and reports what cannot work: unknown names, wrong argument counts and
 * types, operators on values they do not take, assignments outside triggers or to computed
 * fields. It reports every problem it finds, in source order, and fills the tree's `resolved`
 * slots so the evaluator never looks a name up again.
 */

export interface CheckOptions {
  /** What the whole expression must give, with the reason shown when it does not. */
  readonly expect?: { readonly type: ValueType | readonly ValueType[]; readonly why: string };
  /** The field the expression belongs to, when it may not read itself (function fields). */
  readonly self?: string;
  /** The field the expression's value is stored in (`{ $nx }` defaults): it must take it, as an assignment's target must. */
  readonly target?: FieldInfo;
}

export interface CheckResult {
  readonly errors: ExpressionError[];
  readonly type: ValueType;
}

export function check(program: Program, scope: ExpressionScope, options: CheckOptions = {}): CheckResult {
  return new Checker(scope, options).run(program);
}

class Checker {
  readonly #scope: ExpressionScope;
  readonly #options: CheckOptions;
  readonly #errors: ExpressionError[] = [];
  /** Inside a select's where: the table of the candidates, whose fields bare names name. */
  #candidates: TableScope | undefined;

  constructor(scope: ExpressionScope, options: CheckOptions) {
    this.#scope = scope;
    this.#options = options;
  }

  run(program: Program): CheckResult {
    let type: ValueType = 'null';
    if (program.kind === 'expression') {
      type = this.#type(program.body);
      if (this.#options.target) this.#checkAssignable(this.#options.target, type, program.body.at);
      const expect = this.#options.expect;
      if (expect) {
        const wanted = Array.isArray(expect.type) ? (expect.type as readonly ValueType[]) : [expect.type as ValueType];
        if (!wanted.some((w) => fits(type, w))) {
          this.#error(program.body.at, `${expect.why} must give ${wanted.map(typeName).join(' or ')}, not ${typeName(type)}`);
        }
      }
    } else {
      for (const a of program.assignments) {
        const field = this.#ownField(a.target, a.targetAt);
        const valueType = this.#type(a.value);
        if (!field) continue;
        if (!field.writable) {
          this.#error(a.targetAt, `field ${field.name} is computed (type ${field.fieldType}) and cannot be assigned`);
          continue;
        }
        a.resolved = field;
        this.#checkAssignable(field, valueType, a.value.at);
      }
    }
    this.#errors.sort((a, b) => a.line - b.line || a.column - b.column);
    return { errors: this.#errors, type };
  }

  /** A value stored in a field must be of its type; a reference also takes a record (its id is stored). */
  #checkAssignable(field: FieldInfo, valueType: ValueType, at: Position): void {
    if (fits(valueType, field.valueType) || (field.fieldType === 'reference' && isRecordType(valueType))) return;
    this.#error(at, `field ${field.name} takes ${typeName(field.valueType)}, not ${typeName(valueType)}`);
  }

  #error(at: Position, message: string): void {
    this.#errors.push(diagnostic(at, message));
  }

  /** A field of the record the expression runs for; reports unknown and out-of-scope names. */
  #ownField(name: string, at: Position): FieldInfo | undefined {
    const reason = this.#scope.notInScope?.get(name);
    if (reason !== undefined) {
      this.#error(at, reason);
      return undefined;
    }
    if (this.#options.self !== undefined && name === this.#options.self) {
      this.#error(at, `the expression of field ${name} cannot read field ${name} itself`);
      return undefined;
    }
    return this.#fieldOf(this.#scope.table, name, at);
  }

  #fieldOf(table: TableScope, name: string, at: Position): FieldInfo | undefined {
    const field = table.field(name);
    if (!field) this.#error(at, `unknown field ${name} in table ${table.name}`);
    return field;
  }

  #type(node: Node): ValueType {
    switch (node.kind) {
      case 'number': return 'number';
      case 'text': return 'text';
      case 'boolean': return 'boolean';
      case 'null': return 'null';
      case 'this': return { record: this.#scope.table };
      case 'field': {
        const field = this.#candidates ? this.#fieldOf(this.#candidates, node.name, node.at) : this.#ownField(node.name, node.at);
        node.resolved = field;
        return field?.valueType ?? 'any';
      }
      case 'member': {
        const object = this.#type(node.object);
        if (isListType(object) && isRecordType(object.list)) {
          // (select orders).amount: the field of every record of the list.
          const field = this.#fieldOf(object.list.record, node.name, node.at);
          node.resolved = field;
          return { list: field?.valueType ?? 'any' };
        }
        if (!isRecordType(object)) {
          if (object !== 'any') this.#error(node.at, `.${node.name} reads a field of a record, but this is ${typeName(object)}`);
          else this.#error(node.at, `.${node.name} needs a record of a known table (this, or an item of a select)`);
          return 'any';
        }
        const field = node.object.kind === 'this' ? this.#ownField(node.name, node.at) : this.#fieldOf(object.record, node.name, node.at);
        node.resolved = field;
        return field?.valueType ?? 'any';
      }
      case 'negate': {
        const t = this.#type(node.operand);
        if (!fits(t, 'number')) this.#error(node.at, `- takes a number, not ${typeName(t)}`);
        return 'number';
      }
      case 'not': {
        const t = this.#type(node.operand);
        if (!fits(t, 'boolean')) this.#error(node.at, `not takes a boolean, not ${typeName(t)}`);
        return 'boolean';
      }
      case 'binary': return this.#binary(node);
      case 'if': {
        const c = this.#type(node.condition);
        if (!fits(c, 'boolean')) this.#error(node.condition.at, `the condition of if must be a boolean, not ${typeName(c)}`);
        const a = this.#type(node.then);
        const b = this.#type(node.otherwise);
        if (a === 'null') return b;
        if (b === 'null' || fits(b, a)) return a;
        return 'any';
      }
      case 'call': {
        const args = node.args.map((arg) => this.#type(arg));
        const fn = FUNCTIONS.get(node.name);
        if (!fn) {
          this.#error(node.at, `unknown function ${node.name}`);
          return 'any';
        }
        if (args.length < fn.minArgs || args.length > fn.maxArgs) {
          const n = fn.minArgs === fn.maxArgs ? `${fn.minArgs}` : fn.maxArgs >= 100 ? `at least ${fn.minArgs}` : `${fn.minArgs} to ${fn.maxArgs}`;
          this.#error(node.at, `${fn.name} takes ${n} argument${n === '1' ? '' : 's'}, not ${args.length}: ${fn.signature}`);
          return 'any';
        }
        const result = fn.check(args);
        if (typeof result === 'object' && 'argument' in result) {
          this.#error(node.args[result.argument]!.at, `argument ${result.argument + 1} of ${fn.name} ${result.message}`);
          return 'any';
        }
        node.resolved = fn;
        return result;
      }
      case 'select': {
        const table = this.#scope.findTable(node.table);
        if (!table) {
          this.#error(node.tableAt, `unknown table ${node.table} (select names a table of the same module)`);
          if (node.where) this.#type(node.where);
          return { list: 'any' };
        }
        node.resolved = table;
        if (node.where) {
          const outer = this.#candidates;
          this.#candidates = table;
          const c = this.#type(node.where);
          this.#candidates = outer;
          if (!fits(c, 'boolean')) this.#error(node.where.at, `the where condition must be a boolean, not ${typeName(c)}`);
        }
        return { list: { record: table } };
      }
    }
  }

  #binary(node: Extract<Node, { kind: 'binary' }>): ValueType {
    const l = this.#type(node.left);
    const r = this.#type(node.right);
    const scalar = (t: ValueType) => typeof t === 'string';
    switch (node.op) {
      case '+':
        if (l === 'text' || r === 'text') {
          if (!scalar(l) || !scalar(r)) this.#error(node.at, `+ joins texts with numbers, booleans or texts, not ${typeName(scalar(l) ? r : l)}: use concat()`);
          return 'text';
        }
        if (fits(l, 'number') && fits(r, 'number')) return l === 'any' || r === 'any' ? 'any' : 'number';
        this.#error(node.at, `+ adds numbers or joins texts, not ${typeName(l)} and ${typeName(r)}`);
        return 'any';
      case '-': case '*': case '/': case '%':
        if (!fits(l, 'number') || !fits(r, 'number')) this.#error(node.at, `${node.op} takes numbers, not ${typeName(l)} and ${typeName(r)}`);
        return 'number';
      case '=': case '!=':
        if (l !== 'any' && r !== 'any' && l !== 'null' && r !== 'null' && !fits(l, r) && !fits(r, l)) {
          this.#error(node.at, `${node.op} compares ${typeName(l)} with ${typeName(r)}: they are never equal`);
        }
        return 'boolean';
      case '<': case '<=': case '>': case '>=':
        for (const t of [l, r]) {
          if (!scalar(t)) this.#error(node.at, `${node.op} orders numbers, texts or booleans, not ${typeName(t)}`);
        }
        if (scalar(l) && scalar(r) && !fits(l, r) && !fits(r, l)) {
          this.#error(node.at, `${node.op} cannot order ${typeName(l)} against ${typeName(r)}`);
        }
        return 'boolean';
      case 'and': case 'or':
        for (const [t, side] of [[l, node.left], [r, node.right]] as const) {
          if (!fits(t, 'boolean')) this.#error(side.at, `${node.op} takes booleans, not ${typeName(t)}`);
        }
        return 'boolean';
    }
  }
}
