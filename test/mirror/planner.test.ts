import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.ts';
import type { Catalog, MirrorField, MirrorTable } from '../../src/mirror/catalog.ts';
import { MirrorError } from '../../src/mirror/errors.ts';
import { NameAllocator, baseColumnName, baseTableName, fitName, hash8 } from '../../src/mirror/naming.ts';
import { DIALECTS } from '../../src/mirror/dialects.ts';
import type { SchemaOp, SchemaPlan } from '../../src/mirror/schema-planner.ts';
import { describeOp, planSchema } from '../../src/mirror/schema-planner.ts';
import { compileTableFilter } from '../../src/mirror/table-filter.ts';
import type { DialectName } from '../../src/mirror/dialect.ts';
import { field, module, table, workspace } from './fixtures.ts';

function emptyCatalog(dialect: DialectName, foreignNames: string[] = []): Catalog {
  return { dialect, revision: 3, tables: [], fields: [], foreignNames, unmigrated: [], missing: [], foreignTriggers: [], extraGrants: false };
}

/** What the catalog holds after applying a plan (what `Mirror.applySchemaPlan` records). */
function applied(before: Catalog, plan: SchemaPlan): Catalog {
  const tables = new Map(before.tables.map((t) => [t.tableId, t]));
  const fields = new Map(before.fields.map((f) => [`${f.tableId}/${f.fieldId}`, f]));
  for (const op of plan.ops) {
    if (op.op === 'createTable') {
      tables.set(op.table.tableId, op.table);
      for (const f of op.fields) fields.set(`${f.tableId}/${f.fieldId}`, f);
    } else if (op.op === 'dropTable') {
      tables.delete(op.table.tableId);
      for (const k of [...fields.keys()]) if (k.startsWith(`${op.table.tableId}/`)) fields.delete(k);
    } else if (op.op === 'updateTable') {
      tables.set(op.table.tableId, op.table);
    } else if (op.op === 'addColumn' || op.op === 'retypeColumn' || op.op === 'updateField') {
      fields.set(`${op.field.tableId}/${op.field.fieldId}`, op.field);
    } else if (op.op === 'dropColumn') {
      fields.delete(`${op.field.tableId}/${op.field.fieldId}`);
    }
  }
  return { ...before, revision: before.revision + 1, tables: [...tables.values()], fields: [...fields.values()] };
}

const ops = (plan: SchemaPlan) => plan.ops.map(describeOp);

describe('naming', () => {
  it('builds <module>__<table>, prefixes reserved names, and shortens to 63 bytes with a stable hash', () => {
    const pgRules = DIALECTS.postgres.naming;
    const sqliteRules = DIALECTS.sqlite.naming;
    expect(baseTableName(pgRules, 'crm', 'deals')).toBe('crm__deals');
    expect(baseTableName(sqliteRules, 'sqlite', 'stat1')).toBe('t_sqlite__stat1');
    expect(baseTableName(pgRules, 'sqlite', 'stat1')).toBe('sqlite__stat1');
    expect(baseTableName(pgRules, '_wsmirror', 'x')).toBe('t__wsmirror__x');
    for (const rules of [pgRules, sqliteRules]) {
      expect(baseColumnName(rules, 'id')).toBe('f_id');
      expect(baseColumnName(rules, '_synced_at')).toBe('f__synced_at');
      expect(baseColumnName(rules, '_wsmirror_pending')).toBe('f__wsmirror_pending');
      expect(baseColumnName(rules, 'ids')).toBe('ids');
      expect(baseColumnName(rules, 'oid')).toBe('oid');
    }
    // Postgres' system columns (sync/reserved-column-names.test.ts creates them on both dialects).
    expect(baseColumnName(pgRules, 'xmin')).toBe('f_xmin');
    expect(baseColumnName(sqliteRules, 'xmin')).toBe('xmin');
    expect(baseColumnName(sqliteRules, 'rowid')).toBe('rowid');

    const long = 'a'.repeat(150);
    const short = fitName(long, 63);
    expect(short).toHaveLength(63);
    expect(short).toBe(`${'a'.repeat(54)}_${hash8(long)}`);
    expect(fitName(long, 63)).toBe(short);
    expect(fitName(`${long}b`, 63)).not.toBe(short);
    expect(fitName('a'.repeat(63), 63)).toBe('a'.repeat(63));
    expect(fitName(long, Number.POSITIVE_INFINITY)).toBe(long);
  });

  it('gives a taken name to the later claimant with the hash of its id', () => {
    const names = new NameAllocator(63, ['id']);
    expect(names.allocate('x', 'A')).toBe('x');
    expect(names.allocate('x', 'B')).toBe(`x_${hash8('B')}`);
    expect(names.allocate('id', 'C')).toBe(`id_${hash8('C')}`);
    const long = new NameAllocator(63);
    const a = long.allocate('z'.repeat(80), 'A');
    const b = long.allocate('z'.repeat(80), 'B');
    expect(a).not.toBe(b);
    expect(b).toHaveLength(63);
  });
});

describe('table filter', () => {
  it('matches module.table globs: * any run of characters, ? one character', () => {
    const f = compileTableFilter({ include: ['crm.*', 'hr.people', '*.orders', 'sales.order?'], exclude: ['crm.audit_*', '*.tmp*'] });
    expect(f('crm', 'deals')).toBe(true);
    expect(f('crm', 'audit_log')).toBe(false);
    expect(f('hr', 'people')).toBe(true);
    expect(f('hr', 'roles')).toBe(false);
    expect(f('shop', 'orders')).toBe(true);
    expect(f('shop', 'orders_tmp')).toBe(false);
    expect(f('shop', 'items')).toBe(false);
    expect(f('crm', 'tmp1')).toBe(false);
    expect(f('sales', 'orders')).toBe(true);
    expect(f('sales', 'order')).toBe(false);
    expect(f('sales', 'orders2')).toBe(false);
    expect(f('crmx', 'deals')).toBe(false); // the dot is literal
    expect(compileTableFilter({ include: ['*'] })('any', 'thing')).toBe(true);
    expect(compileTableFilter({})('any', 'thing')).toBe(true);
    expect(compileTableFilter({ exclude: ['*'] })('any', 'thing')).toBe(false);
    expect(compileTableFilter({ include: ['crm_x.*'] })('crm', 'x')).toBe(false);
  });

  it('refuses malformed patterns with ConfigError naming them', () => {
    expect(() => compileTableFilter({ include: ['CRM.*'] })).toThrow(ConfigError);
    expect(() => compileTableFilter({ exclude: ['a.b.c'] })).toThrow(/exclude\[0\]: "a\.b\.c" is not a table pattern/);
    expect(() => compileTableFilter({ include: ['a;drop'] })).toThrow(ConfigError);
    // A bare module name is not a pattern: module.* says it.
    expect(() => compileTableFilter({ include: ['crm.*', 'hr'] })).toThrow(/include\[1\]: "hr"/);
    expect(() => compileTableFilter({ include: ['crm.(x|y)'] })).toThrow(ConfigError);
  });
});

describe('planSchema', () => {
  const ws1 = workspace(module('m1', 'crm', [
    table('t1', 'deals', [field('a', 'title', 'string'), field('b', 'amount', 'number')]),
    table('t2', 'notes', [field('c', 'body', 'string')]),
  ]));

  it('creates every included table with its columns on first run, and nothing on the second', () => {
    const catalog = emptyCatalog('postgres');
    const plan = planSchema(catalog, ws1);
    expect(plan.baseRevision).toBe(3);
    expect(ops(plan)).toEqual(['create table crm__deals (2 columns)', 'create table crm__notes (1 columns)']);
    const create = plan.ops[0] as Extract<SchemaOp, { op: 'createTable' }>;
    expect(create.table).toMatchObject({ state: 'needs_backfill', mode: 'history', label: 'deals label', moduleLabel: 'crm module' });
    expect(create.fields.map((f) => [f.columnName, f.sqlType, f.position])).toEqual([['title', 'text', 0], ['amount', 'double precision', 1]]);
    expect(planSchema(applied(catalog, plan), ws1).ops).toEqual([]);
  });

  it('orders a mixed diff: drops, renames, column changes, creates, catalog updates', () => {
    const c1 = applied(emptyCatalog('sqlite'), planSchema(emptyCatalog('sqlite'), ws1));
    const ws2 = workspace(module('m1', 'crm', [
      table('t1', 'deals2', [field('a', 'headline', 'string'), field('b', 'amount', 'string'), field('d', 'won', 'boolean')], { labels: { '': 'Deals' } }),
      table('t3', 'people', [field('e', 'name', 'string')]),
    ]));
    expect(ops(planSchema(c1, ws2))).toEqual([
      'drop table crm__notes',
      'rename table crm__deals to crm__deals2',
      'rename column crm__deals2.title to headline',
      'retype column crm__deals2.amount from number to string (rebuilt)',
      'add column crm__deals2.won INTEGER',
      'create table crm__people (1 columns)',
      // The table was still waiting for its first backfill, so its state does not change.
      'update catalog of table crm__deals2 (tableName, label, labels, sqlName, viewName)',
      'update catalog of column crm__deals2.headline (fieldName, label, labels, columnName)',
    ]);
  });

  it('swaps names through temporary names', () => {
    const c1 = applied(emptyCatalog('postgres'), planSchema(emptyCatalog('postgres'), ws1));
    const swapped = workspace(module('m1', 'crm', [
      table('t1', 'notes', [field('a', 'amount', 'string'), field('b', 'title', 'number')]),
      table('t2', 'deals', [field('c', 'body', 'string')]),
    ]));
    const plan = planSchema(c1, swapped);
    expect(ops(plan).filter((d) => d.startsWith('rename'))).toEqual([
      'rename table crm__deals to _wsmirror_tmp_0',
      'rename table crm__notes to _wsmirror_tmp_1',
      'rename table _wsmirror_tmp_0 to crm__notes',
      'rename table _wsmirror_tmp_1 to crm__deals',
      'rename column crm__notes.title to _wsmirror_tmp_0',
      'rename column crm__notes.amount to _wsmirror_tmp_1',
      'rename column crm__notes._wsmirror_tmp_0 to amount',
      'rename column crm__notes._wsmirror_tmp_1 to title',
    ]);
    expect(planSchema(applied(c1, plan), swapped).ops).toEqual([]);
  });

  it('avoids names other objects hold in the schema, and concatenations that collide', () => {
    const ws = workspace(
      module('m1', 'a_', [table('t1', 'b', [])]),
      module('m2', 'a', [table('t2', '_b', [])]),
      module('m3', 'crm', [table('t3', 'deals', [])]),
    );
    const plan = planSchema(emptyCatalog('postgres', ['crm__deals']), ws);
    expect(plan.ops.map((o) => o.op === 'createTable' && o.table.sqlName)).toEqual([
      'a___b', `a___b_${hash8('t2')}`, `crm__deals_${hash8('t3')}`,
    ]);
  });

  it('keeps a table whose name is unchanged even when the new name rules would differ', () => {
    const c1 = applied(emptyCatalog('postgres'), planSchema(emptyCatalog('postgres'), ws1));
    const moved = { ...c1, tables: c1.tables.map((t): MirrorTable => (t.tableId === 't1' ? { ...t, sqlName: 'legacy_name' } : t)) };
    expect(planSchema(moved, ws1).ops).toEqual([]);
    const fieldMoved = { ...c1, fields: c1.fields.map((f): MirrorField => (f.fieldId === 'a' ? { ...f, columnName: 'legacy_col' } : f)) };
    expect(planSchema(fieldMoved, ws1).ops).toEqual([]);
  });

  it('updates only the catalog for label, option and order changes', () => {
    const ws = (labels: Record<string, string>, options: { id: string; name: string; order: number }[]) => workspace(module('m1', 'crm', [
      table('t1', 'deals', [field('s', 'status', 'choice', { labels, options })]),
    ]));
    const c1 = applied(emptyCatalog('postgres'), planSchema(emptyCatalog('postgres'), ws({ '': 'Status' }, [{ id: 'o1', name: 'A', order: 0 }])));
    // Same content, keys in another order (as jsonb returns them): nothing to do.
    expect(planSchema(c1, ws({ '': 'Status' }, [{ order: 0, name: 'A', id: 'o1' } as never])).ops).toEqual([]);
    expect(ops(planSchema(c1, ws({ '': 'State' }, [{ id: 'o1', name: 'B', order: 0 }])))).toEqual([
      'update catalog of column crm__deals.status (label, labels, options)',
    ]);
  });

  it('refuses a workspace that cannot be planned safely', () => {
    const noFields = workspace(module('m1', 'crm', [{ id: 't1', name: 'deals' }]));
    expect(() => planSchema(emptyCatalog('sqlite'), noFields)).toThrow(/without its field list/);
    expect(() => planSchema(emptyCatalog('sqlite'), noFields, { exclude: ['crm.deals'] })).not.toThrow();
    const twice = workspace(module('m1', 'crm', [table('t1', 'a', []), table('t1', 'b', [])]));
    expect(() => planSchema(emptyCatalog('sqlite'), twice)).toThrow(MirrorError);
    const dupField = workspace(module('m1', 'crm', [table('t1', 'a', [field('x', 'p', 'string'), field('x', 'q', 'string')])]));
    const c1 = applied(emptyCatalog('sqlite'), planSchema(emptyCatalog('sqlite'), workspace(module('m1', 'crm', [table('t1', 'a', [])]))));
    expect(() => planSchema(c1, dupField)).toThrow(/field id x twice/);
  });
});
