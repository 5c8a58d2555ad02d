import { describe, expect, it } from 'vitest';
import { compile } from '../../../src/emulator/expression/compile.ts';
import { memoryTable, scopeOf } from './in-memory-tables.ts';

const people = memoryTable(1, 'people', {
  name: 'string', age: 'number', active: 'boolean', tags: 'multi', boss: 'reference', total: 'function', status: 'choice',
});
const orders = memoryTable(2, 'orders', { amount: 'number', customer: 'reference' });
const scope = scopeOf(people, [orders]);

function errors(source: string, kind: 'expression' | 'trigger' = 'expression', options = {}) {
  const r = compile(source, kind, scope, options);
  return r.ok ? [] : r.errors;
}

describe('the expression checker', () => {
  it.each([
    ['name + " is " + age'],
    ['if active then age * 2 else 0 end'],
    ['count(select orders where customer = this.boss and amount > 10)'],
    ['sum((select orders where amount > 0).amount) > 0 or true'],
    ['first(select orders).amount + 1'],
    ['round(age / 3, 2) >= 1'],
    ['contains(tags, "vip") and not active'],
    ['status = "open"'],
    ['userRole() = "admin"'],
  ])('accepts %s', (source) => {
    expect(errors(source)).toEqual([]);
  });

  it.each([
    ['nme = 1', 1, 1, 'unknown field nme in table people'],
    ['age + frobnicate(1)', 1, 7, 'unknown function frobnicate'],
    ['select invoices', 1, 8, 'unknown table invoices'],
    ['select orders where name = 1', 1, 21, 'unknown field name in table orders'],
    ['this.nope', 1, 6, 'unknown field nope'],
    ['upper(1)', 1, 7, 'argument 1 of upper expects text, not number'],
    ['round()', 1, 1, 'round takes 1 to 2 arguments, not 0: round(number, digits?)'],
    ['today(1)', 1, 1, 'today takes 0 arguments, not 1'],
    ['active * 2', 1, 8, '* takes numbers, not boolean and number'],
    ['age = "x"', 1, 5, '= compares number with text: they are never equal'],
    ['if age then 1 else 2 end', 1, 4, 'the condition of if must be a boolean, not number'],
    ['age and active', 1, 1, 'and takes booleans, not number'],
    ['not name', 1, 1, 'not takes a boolean, not text'],
    ['age.name', 1, 5, '.name reads a field of a record, but this is number'],
    ['sum(select orders)', 1, 5, 'argument 1 of sum expects number or a list of number, not a list of orders records'],
    ['(select orders).nope', 1, 17, 'unknown field nope in table orders'],
    ['count(age)', 1, 7, 'argument 1 of count expects a list, not number'],
    ['name + tags', 1, 6, '+ joins texts with numbers, booleans or texts, not a list of text'],
  ])('%s: line %i, column %i', (source, line, column, message) => {
    const found = errors(source);
    expect(found[0]).toMatchObject({ line, column });
    expect(found[0]!.message).toContain(message);
  });

  it('reports every problem, in source order, each at its token', () => {
    expect(errors('nope +\n  upper(2) + missing()')).toEqual([
      { line: 1, column: 1, message: 'unknown field nope in table people' },
      { line: 2, column: 9, message: 'argument 1 of upper expects text, not number' },
      { line: 2, column: 14, message: 'unknown function missing' },
    ]);
  });

  it('checks the type the expression must give', () => {
    expect(errors('age + 1', 'expression', { expect: { type: 'boolean', why: 'a guard' } })[0]).toEqual({
      line: 1, column: 5, message: 'a guard must give boolean, not number',
    });
    expect(errors('age > 1', 'expression', { expect: { type: 'boolean', why: 'a guard' } })).toEqual([]);
  });

  it('triggers: targets must be writable fields of the table, values of their type', () => {
    expect(errors('age := age + 1; this.name := "x"', 'trigger')).toEqual([]);
    expect(errors('total := 1', 'trigger')[0]).toMatchObject({ line: 1, column: 1, message: expect.stringContaining('computed (type function)') });
    expect(errors('age := "x"', 'trigger')[0]).toMatchObject({ line: 1, column: 8, message: 'field age takes number, not text' });
    expect(errors('ghost := 1', 'trigger')[0]).toMatchObject({ line: 1, column: 1, message: 'unknown field ghost in table people' });
  });

  it('names out of scope and the field itself are errors with the reason', () => {
    const notYet = scopeOf(people, [orders], new Map([['age', 'field age is not in scope yet']]));
    const r = compile('this.age > 1', 'expression', notYet);
    expect(r.ok ? [] : r.errors).toEqual([{ line: 1, column: 6, message: 'field age is not in scope yet' }]);
    expect(errors('total + 1', 'expression', { self: 'total' })[0]!.message).toContain('cannot read field total itself');
    // Inside where, bare names belong to the candidates: the same name of the own table is fine.
    const inWhere = compile('count(select people where age > 1)', 'expression', notYet);
    expect(inWhere.ok).toBe(true);
  });
});
