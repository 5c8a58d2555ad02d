import type { ExpressionError } from '../../api/index.ts';
import { diagnostic, type Position } from './diagnostics.ts';
import { describeToken, tokenize, type Keyword, type Operator, type Token } from './lexer.ts';
import type { Assignment, BinaryOperator, Node, Program, ProgramKind } from './syntax.ts';

/**
 * Recursive descent over the grammar in docs/expressions.md. The first syntax error stops the
 * parse and is returned (never thrown). Nesting is bounded — both the parser's own recursion and
 * the depth of the tree it builds — so neither parsing nor evaluating can exhaust the stack.
 */

export const MAX_NESTING = 64;
export const MAX_SOURCE_LENGTH = 20_000;

export type ParseResult = { ok: true; program: Program } | { ok: false; error: ExpressionError };

class SyntaxProblem extends Error {
  readonly at: Position;
  constructor(at: Position, message: string) {
    super(message);
    this.at = at;
  }
}

const COMPARISONS: readonly Operator[] = ['=', '!=', '<', '<=', '>', '>='];
// The left-associative levels, loosest first (comparisons do not chain).
const OR: readonly BinaryOperator[] = ['or'];
const AND: readonly BinaryOperator[] = ['and'];
const ADDITIVE: readonly BinaryOperator[] = ['+', '-'];
const MULTIPLICATIVE: readonly BinaryOperator[] = ['*', '/', '%'];

export function parse(source: string, kind: ProgramKind): ParseResult {
  if (source.length > MAX_SOURCE_LENGTH) {
    return { ok: false, error: diagnostic({ line: 1, column: 1 }, `the expression is longer than ${MAX_SOURCE_LENGTH} characters`) };
  }
  const lexed = tokenize(source);
  if (!lexed.ok) return lexed;
  try {
    return { ok: true, program: new Parser(lexed.tokens).program(kind) };
  } catch (e) {
    if (e instanceof SyntaxProblem) return { ok: false, error: diagnostic(e.at, e.message) };
    throw e;
  }
}

class Parser {
  readonly #tokens: Token[];
  #i = 0;
  #nesting = 0;
  readonly #depth = new WeakMap<Node, number>();

  constructor(tokens: Token[]) {
    this.#tokens = tokens;
  }

  program(kind: ProgramKind): Program {
    if (this.#peek().kind === 'end-of-input') throw new SyntaxProblem(this.#peek().at, 'the expression is empty');
    const program: Program = kind === 'expression'
      ? { kind: 'expression', body: this.#expression() }
      : { kind: 'trigger', assignments: this.#assignments() };
    const rest = this.#peek();
    if (rest.kind !== 'end-of-input') {
      const hint = kind === 'expression' && rest.kind === 'operator' && rest.value === ':='
        ? ': assignments (:=) belong in onUpdate triggers only'
        : kind === 'trigger' ? ': join assignments with ;' : '';
      throw new SyntaxProblem(rest.at, `unexpected ${describeToken(rest)}${hint}`);
    }
    return program;
  }

  // ---- tokens ---------------------------------------------------------------------------------

  #peek(): Token {
    return this.#tokens[this.#i]!;
  }

  #next(): Token {
    const t = this.#tokens[this.#i]!;
    if (t.kind !== 'end-of-input') this.#i++;
    return t;
  }

  #isOperator(value: Operator): boolean {
    const t = this.#peek();
    return t.kind === 'operator' && t.value === value;
  }

  #isKeyword(value: Keyword): boolean {
    const t = this.#peek();
    return t.kind === 'keyword' && t.value === value;
  }

  #expectOperator(value: Operator, context: string): Token {
    if (!this.#isOperator(value)) {
      throw new SyntaxProblem(this.#peek().at, `expected "${value}" ${context}, found ${describeToken(this.#peek())}`);
    }
    return this.#next();
  }

  #expectKeyword(value: Keyword, context: string): Token {
    if (!this.#isKeyword(value)) {
      throw new SyntaxProblem(this.#peek().at, `expected "${value}" ${context}, found ${describeToken(this.#peek())}`);
    }
    return this.#next();
  }

  #expectName(context: string): Extract<Token, { kind: 'name' }> {
    const t = this.#peek();
    if (t.kind !== 'name') {
      const hint = t.kind === 'keyword' ? ` (${t.value} is a keyword: write \`${t.value}\` for a field of that name)` : '';
      throw new SyntaxProblem(t.at, `expected ${context}, found ${describeToken(t)}${hint}`);
    }
    this.#next();
    return t;
  }

  // ---- depth ----------------------------------------------------------------------------------

  #nested<T>(at: Position, parse: () => T): T {
    if (++this.#nesting > MAX_NESTING) throw new SyntaxProblem(at, `the expression is nested more than ${MAX_NESTING} levels deep`);
    try {
      return parse();
    } finally {
      this.#nesting--;
    }
  }

  /** Records a node's depth; a tree deeper than MAX_NESTING (long operator chains too) is refused. */
  #node<N extends Node>(node: N, ...children: (Node | undefined)[]): N {
    let depth = 1;
    for (const c of children) if (c) depth = Math.max(depth, (this.#depth.get(c) ?? 1) + 1);
    if (depth > MAX_NESTING * 2) {
      throw new SyntaxProblem(node.at, `the expression is nested more than ${MAX_NESTING * 2} operations deep`);
    }
    this.#depth.set(node, depth);
    return node;
  }

  // ---- grammar --------------------------------------------------------------------------------

  #assignments(): Assignment[] {
    const list: Assignment[] = [this.#assignment()];
    while (this.#isOperator(';')) {
      this.#next();
      if (this.#peek().kind === 'end-of-input') break; // a trailing ; is allowed
      list.push(this.#assignment());
    }
    return list;
  }

  #assignment(): Assignment {
    const start = this.#peek();
    if (start.kind === 'keyword' && start.value === 'this') {
      this.#next();
      this.#expectOperator('.', 'after this in an assignment');
    }
    const target = this.#expectName('the name of a field to assign (field := value)');
    this.#expectOperator(':=', `after ${target.value} (a trigger is field := value; field := value …)`);
    return { target: target.value, targetAt: target.at, value: this.#expression() };
  }

  #expression(): Node {
    return this.#or();
  }

  #or(): Node {
    return this.#leftAssociative(OR, () => this.#and());
  }

  #and(): Node {
    return this.#leftAssociative(AND, () => this.#not());
  }

  #not(): Node {
    if (this.#isKeyword('not')) {
      const op = this.#next();
      const operand = this.#nested(op.at, () => this.#not());
      return this.#node({ kind: 'not', operand, at: op.at }, operand);
    }
    return this.#comparison();
  }

  #comparison(): Node {
    const left = this.#additive();
    const t = this.#peek();
    if (t.kind === 'operator' && COMPARISONS.includes(t.value)) {
      this.#next();
      const right = this.#additive();
      const next = this.#peek();
      if (next.kind === 'operator' && COMPARISONS.includes(next.value)) {
        throw new SyntaxProblem(next.at, 'comparisons cannot be chained: join them with and');
      }
      return this.#node({ kind: 'binary', op: t.value as BinaryOperator, left, right, at: t.at }, left, right);
    }
    return left;
  }

  #additive(): Node {
    return this.#leftAssociative(ADDITIVE, () => this.#multiplicative());
  }

  #multiplicative(): Node {
    return this.#leftAssociative(MULTIPLICATIVE, () => this.#unary());
  }

  /** Operands of the next level joined left to right by the operators of this one: `a - b - c` is `(a - b) - c`. */
  #leftAssociative(operators: readonly BinaryOperator[], operand: () => Node): Node {
    let left = operand();
    for (;;) {
      const t = this.#peek();
      const op = t.kind === 'operator' || t.kind === 'keyword' ? operators.find((o) => o === t.value) : undefined;
      if (op === undefined) return left;
      this.#next();
      const right = operand();
      left = this.#node({ kind: 'binary', op, left, right, at: t.at }, left, right);
    }
  }

  #unary(): Node {
    if (this.#isOperator('-')) {
      const op = this.#next();
      const operand = this.#nested(op.at, () => this.#unary());
      return this.#node({ kind: 'negate', operand, at: op.at }, operand);
    }
    return this.#postfix();
  }

  #postfix(): Node {
    let node = this.#primary();
    while (this.#isOperator('.')) {
      this.#next();
      const name = this.#expectName('a field name after "."');
      node = this.#node({ kind: 'member', object: node, name: name.value, at: name.at }, node);
    }
    return node;
  }

  #primary(): Node {
    const t = this.#next();
    switch (t.kind) {
      case 'number': return this.#node({ kind: 'number', value: t.value, at: t.at });
      case 'string': return this.#node({ kind: 'text', value: t.value, at: t.at });
      case 'name':
        if (this.#isOperator('(')) return this.#call(t);
        return this.#node({ kind: 'field', name: t.value, at: t.at });
      case 'keyword':
        switch (t.value) {
          case 'true': return this.#node({ kind: 'boolean', value: true, at: t.at });
          case 'false': return this.#node({ kind: 'boolean', value: false, at: t.at });
          case 'null': return this.#node({ kind: 'null', at: t.at });
          case 'this': return this.#node({ kind: 'this', at: t.at });
          case 'if': return this.#nested(t.at, () => this.#if(t.at));
          case 'select': return this.#nested(t.at, () => this.#select(t.at));
          default: break;
        }
        break;
      case 'operator':
        if (t.value === '(') {
          const inner = this.#nested(t.at, () => this.#expression());
          this.#expectOperator(')', `to close the "(" at line ${t.at.line}, column ${t.at.column}`);
          return inner;
        }
        break;
      default: break;
    }
    throw new SyntaxProblem(t.at, `expected a value (a field, a number, a text, a function call, if or select), found ${describeToken(t)}`);
  }

  #call(name: Extract<Token, { kind: 'name' }>): Node {
    return this.#nested(name.at, () => {
      this.#next(); // (
      const args: Node[] = [];
      if (!this.#isOperator(')')) {
        args.push(this.#expression());
        while (this.#isOperator(',')) {
          this.#next();
          args.push(this.#expression());
        }
      }
      this.#expectOperator(')', `to close the arguments of ${name.value}(`);
      return this.#node({ kind: 'call', name: name.value, args, at: name.at }, ...args);
    });
  }

  #if(at: Position): Node {
    const condition = this.#expression();
    this.#expectKeyword('then', 'after the condition of if');
    const then = this.#expression();
    this.#expectKeyword('else', 'after the then branch (every if needs an else)');
    const otherwise = this.#expression();
    this.#expectKeyword('end', `to close the if at line ${at.line}, column ${at.column}`);
    return this.#node({ kind: 'if', condition, then, otherwise, at }, condition, then, otherwise);
  }

  #select(at: Position): Node {
    const table = this.#expectName('a table name after select');
    let where: Node | undefined;
    if (this.#isKeyword('where')) {
      this.#next();
      where = this.#expression();
    }
    return this.#node({ kind: 'select', table: table.value, tableAt: table.at, where, at }, where);
  }
}
