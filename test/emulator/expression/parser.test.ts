import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_NESTING, MAX_SOURCE_LENGTH, parse } from '../../../src/emulator/expression/parser.ts';

function errorOf(source: string, kind: 'expression' | 'trigger' = 'expression') {
  const r = parse(source, kind);
  if (r.ok) throw new Error(`expected ${JSON.stringify(source)} not to parse`);
  return r.error;
}

describe('the expression parser', () => {
  it.each([
    ['1 + 2 * 3'],
    ['(price + 1) * quantity'],
    ['"a" + \'b\''],
    ['not done and (a or b)'],
    ['if a > 1 then "big" else if a > 0 then "small" else "none" end end'],
    ['count(select orders where customer = this.id and total >= 10)'],
    ['select orders'],
    ['-x % 3 != 0'],
    ['`2fa` = true and `end` = null'],
    ['upper(concat(first, " ", last))'],
    ['first(select people).name'],
  ])('parses %s', (source) => {
    expect(parse(source, 'expression').ok).toBe(true);
  });

  it('parses triggers: assignments joined by ; (a trailing ; allowed), this.field as target', () => {
    const r = parse('a := 1; this.b := "x";', 'trigger');
    expect(r.ok).toBe(true);
    if (r.ok && r.program.kind === 'trigger') expect(r.program.assignments.map((a) => a.target)).toEqual(['a', 'b']);
  });

  it('joins binary operators left to right, tighter levels first: or, and, + -, * / %', () => {
    const tree = (source: string): unknown => {
      const shape = (n: unknown): unknown => {
        const node = n as { kind: string; op?: string; left?: unknown; right?: unknown; name?: string };
        return node.kind === 'binary' ? [shape(node.left), node.op, shape(node.right)] : node.name;
      };
      const r = parse(source, 'expression');
      return r.ok && r.program.kind === 'expression' ? shape(r.program.body) : r;
    };
    expect(tree('a - b - c')).toEqual([['a', '-', 'b'], '-', 'c']);
    expect(tree('a / b * c % d')).toEqual([[['a', '/', 'b'], '*', 'c'], '%', 'd']);
    expect(tree('a + b * c - d')).toEqual([['a', '+', ['b', '*', 'c']], '-', 'd']);
    expect(tree('a or b and c or d')).toEqual([['a', 'or', ['b', 'and', 'c']], 'or', 'd']);
    expect(tree('a and b and c')).toEqual([['a', 'and', 'b'], 'and', 'c']);
  });

  it('keeps the position of every node: operators at the operator, calls at the name', () => {
    const r = parse('a +\n  upper(b)', 'expression');
    expect(r.ok && r.program.kind === 'expression' && r.program.body).toMatchObject({
      kind: 'binary', op: '+', at: { line: 1, column: 3 },
      left: { kind: 'field', name: 'a', at: { line: 1, column: 1 } },
      right: { kind: 'call', name: 'upper', at: { line: 2, column: 3 } },
    });
  });

  it.each([
    ['', 1, 1, 'the expression is empty'],
    ['1 +', 1, 4, 'expected a value'],
    ['(1 + 2', 1, 7, 'expected ")" to close the "(" at line 1, column 1'],
    ['a = 1 = 2', 1, 7, 'comparisons cannot be chained'],
    ['if a then b end', 1, 13, 'expected "else"'],
    ['if a then b else c', 1, 19, 'expected "end" to close the if at line 1, column 1'],
    ['"open', 1, 1, 'this text is not closed'],
    ['a\n  # b', 2, 3, 'unexpected character "#"'],
    ['2fa', 1, 1, 'a name cannot start with a digit: write `2fa`'],
    ['select where', 1, 8, 'expected a table name after select, found "where"'],
    ['a := 1', 1, 3, 'assignments (:=) belong in onUpdate triggers only'],
    ['upper(a, )', 1, 10, 'expected a value'],
    ['"\\q"', 1, 2, 'unknown escape \\q'],
    ['x.1', 1, 3, 'expected a field name after "."'],
  ])('reports %j at line %i, column %i', (source, line, column, message) => {
    const e = errorOf(source);
    expect(e).toMatchObject({ line, column });
    expect(e.message).toContain(message);
  });

  it.each([
    ['a := 1 b := 2', 1, 8, 'join assignments with ;'],
    ['1 + 1', 1, 1, 'expected the name of a field to assign'],
    ['a = 1', 1, 3, 'expected ":=" after a'],
  ])('reports trigger problem %j at line %i, column %i', (source, line, column, message) => {
    const e = errorOf(source, 'trigger');
    expect(e).toMatchObject({ line, column });
    expect(e.message).toContain(message);
  });

  it('bounds nesting: deep parentheses, long chains and deep unary operators are errors, not crashes', () => {
    expect(errorOf('('.repeat(9_000) + '1' + ')'.repeat(9_000)).message).toContain(`nested more than ${MAX_NESTING} levels`);
    expect(errorOf(Array(4_000).fill('1').join(' + ')).message).toContain('nested more than');
    expect(errorOf('-'.repeat(19_000) + '1').message).toContain('nested more than');
    expect(errorOf('1'.repeat(MAX_SOURCE_LENGTH + 1))).toMatchObject({ line: 1, column: 1, message: `the expression is longer than ${MAX_SOURCE_LENGTH} characters` });
    expect(errorOf('not '.repeat(1_000) + 'true').message).toContain('nested more than');
    expect(parse('('.repeat(MAX_NESTING - 1) + '1' + ')'.repeat(MAX_NESTING - 1), 'expression').ok).toBe(true);
  });

  it('property: any text yields a tree or one error whose position lies inside the text', () => {
    const alphabet = fc.constantFrom(
      ...'abz_019 \n\t"\'`\\()+-*/%=!<>:;.,#é😀'.split(''),
      'if ', ' then ', ' else ', ' end', 'select ', ' where ', 'not ', ' and ', ' or ', 'this', 'null', ':=', '\\"',
    );
    const sources = fc.oneof(fc.string(), fc.string({ unit: alphabet, maxLength: 60 }), fc.string({ unit: 'binary' }));
    fc.assert(
      fc.property(sources, fc.constantFrom('expression' as const, 'trigger' as const), (source, kind) => {
        const r = parse(source, kind);
        if (r.ok) return;
        const lines = source.split('\n');
        expect(r.error.line).toBeGreaterThanOrEqual(1);
        expect(r.error.line).toBeLessThanOrEqual(lines.length);
        expect(r.error.column).toBeGreaterThanOrEqual(1);
        expect(r.error.column).toBeLessThanOrEqual(lines[r.error.line - 1]!.length + 1);
        expect(r.error.message.length).toBeGreaterThan(0);
      }),
      { numRuns: 3000 },
    );
  });
});
