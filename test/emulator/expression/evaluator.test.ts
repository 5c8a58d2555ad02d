import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compile } from '../../../src/emulator/expression/compile.ts';
import { EvaluationError } from '../../../src/emulator/expression/diagnostics.ts';
import { Budget, evaluate, runTrigger } from '../../../src/emulator/expression/evaluator.ts';
import type { Value } from '../../../src/emulator/expression/scope.ts';
import { addRow, memoryHost, memoryTable, scopeOf } from './in-memory-tables.ts';

const people = memoryTable(1, 'people', { name: 'string', age: 'number', active: 'boolean', tags: 'multi', note: 'string' });
const orders = memoryTable(2, 'orders', { amount: 'number', customer: 'reference', paid: 'boolean' });
const scope = scopeOf(people, [orders]);
const ada = addRow(people, { name: 'Ada', age: 36, active: true, tags: ['vip', 'eu'] });
addRow(people, { name: 'Bob', age: 17, active: false, tags: [] });
for (const [amount, customer, paid] of [[10, 1, true], [25, 1, false], [7, 2, true]] as const) addRow(orders, { amount, customer, paid });

function run(source: string, host = memoryHost()): Value {
  const r = compile(source, 'expression', scope);
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  return evaluate(r.program, ada, host);
}

function failure(source: string): EvaluationError {
  try {
    run(source);
  } catch (e) {
    if (e instanceof EvaluationError) return e;
    throw e;
  }
  throw new Error(`expected ${source} to fail`);
}

describe('the expression evaluator', () => {
  it.each([
    ['1 + 2 * 3 - 4 / 2', 5],
    ['7 % 3', 1],
    ['-age', -36],
    ['name + " is " + age', 'Ada is 36'],
    ['"x" + null + true', 'xtrue'],
    ['age + null', null],
    ['age > 18 and active', true],
    ['age < 18 or not active', false],
    ['note = null', true],
    ['null = null', true],
    ['note < "a"', false],
    ['if age >= 18 then "adult" else "minor" end', 'adult'],
    ['if note = "x" then 1 else 2 end', 2],
    ['concat(name, "-", tags)', 'Ada-vip, eu'],
    ['upper(name) + lower(name)', 'ADAada'],
    ['length(name) + length(tags) + length(note)', 5],
    ['round(2.345, 2)', 2.35],
    ['round(-2.5)', -3],
    ['number(" 42 ") + number("x")', null],
    ['text(age) + text(active)', '36true'],
    ['contains(tags, "vip") and contains(name, "d")', true],
    ['count(select orders where customer = 1)', 2],
    ['sum((select orders where customer = this.age - 35 and paid = true).amount)', 10],
    ['(select orders where customer = 1).amount', [10, 25]],
    ['first(select orders where amount > 20).amount', 25],
    ['count(select people where age > this.age - 20)', 2],
    ['max(3, 9, 4) - min(3, 9, 4)', 6],
    ['avg(2, 4)', 3],
    ['isEmpty(note) and not isEmpty(tags)', true],
    ['coalesce(note, name)', 'Ada'],
    ['today() + " " + now()', '2026-03-01 2026-03-01T10:00:00.000Z'],
    ['userRole()', 'admin'],
    ['first(select orders where amount > 1000)', null],
  ])('%s gives %j', (source, expected) => {
    expect(run(source)).toEqual(expected);
  });

  it('sums amounts of a select through a member of each record', () => {
    expect(run('sum((select orders where customer = 1).amount) + avg((select orders).amount)')).toBe(35 + 14);
  });

  it('fails with the position of the operation at fault', () => {
    expect(failure('age / (age - 36)')).toMatchObject({ line: 1, column: 5, message: 'division by zero' });
    expect(failure('1 +\n round(1, 99)')).toMatchObject({ line: 2, column: 2, message: expect.stringContaining('0 to 15') });
  });

  it('stops a select over a large table at the step budget', () => {
    const big = memoryTable(3, 'big', { n: 'number' });
    for (let i = 0; i < 250_000; i++) addRow(big, { n: i });
    const r = compile('count(select big where n >= 0)', 'expression', scopeOf(people, [big]));
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(() => evaluate(r.program, ada, memoryHost())).toThrow(/more than 200000 steps|longer than 250 ms/);
  });

  it('stops at the deadline even with steps to spare', () => {
    const big = memoryTable(4, 'slow', { n: 'number' });
    for (let i = 0; i < 5_000; i++) addRow(big, { n: i });
    const r = compile('count(select slow where count(select slow where n = 1) = 1)', 'expression', scopeOf(people, [big]));
    if (!r.ok) throw new Error('does not compile');
    expect(() => evaluate(r.program, ada, memoryHost(), new Budget(Number.MAX_SAFE_INTEGER, 50))).toThrow(/longer than/);
  });

  it('runs triggers in order, each assignment seeing the earlier ones', () => {
    const r = compile('age := age + 1; note := "now " + age', 'trigger', scope);
    if (!r.ok) throw new Error(JSON.stringify(r.errors));
    const writes = runTrigger(r.program, ada, memoryHost());
    expect(writes.map((w) => [w.field.name, w.value])).toEqual([['age', 37], ['note', 'now 37']]);
    expect(ada.data[people.field('age')!.id]).toBe(36);
  });

  it('property: checked random expressions either give a value or throw an EvaluationError', () => {
    const atom = fc.constantFrom('age', 'name', 'active', 'note', 'tags', '0', '1', '2.5', '"x"', 'null', 'true', 'this.age');
    const expr: fc.Arbitrary<string> = fc.letrec<{ e: string }>((tie) => ({
      e: fc.oneof(
        { depthSize: 'small', withCrossShrink: true },
        atom,
        fc.tuple(tie('e'), fc.constantFrom('+', '-', '*', '/', '%', '=', '!=', '<', '>=', 'and', 'or'), tie('e')).map(([a, op, b]) => `(${a} ${op} ${b})`),
        tie('e').map((a) => `not ${a}`),
        tie('e').map((a) => `-${a}`),
        fc.tuple(tie('e'), tie('e'), tie('e')).map(([c, a, b]) => `if ${c} then ${a} else ${b} end`),
        fc.tuple(fc.constantFrom('upper', 'length', 'round', 'number', 'text', 'count', 'sum', 'first', 'isEmpty'), tie('e')).map(([f, a]) => `${f}(${a})`),
        tie('e').map((a) => `count(select orders where amount > ${a})`),
      ),
    })).e;
    fc.assert(
      fc.property(expr, (source) => {
        const r = compile(source, 'expression', scope);
        if (!r.ok) return;
        try {
          evaluate(r.program, ada, memoryHost());
        } catch (e) {
          expect(e).toBeInstanceOf(EvaluationError);
        }
      }),
      { numRuns: 2000 },
    );
  });
});
