import type { ExpressionError } from '../../api/index.ts';
import type { EmulatorContext } from '../context.ts';
import { compile, type Compiled } from '../expression/compile.ts';
import { isListType, isRecordType, typeName, type ValueType } from '../expression/scope.ts';
import { readsRecord } from '../expression/reads-record.ts';
import { ModuleTables, tableScope, type StoreFieldInfo, type StoreTableScope } from './expression-scope.ts';
import { isNx } from './field-rules.ts';
import { schemaGeneration } from './schema-generation.ts';
import type { FieldRow, TableRow } from './schema-rows.ts';

/**
 * Every expression of a table's fields, compiled once per schema generation and kept until the
 * schema changes: records requests find them ready, and a table without expressions costs one
 * map look-up. The same compilation gives `expressionErrors` when a field is saved.
 */

export type Checked = Compiled & { readonly ok: true };

/** The dynamic-choice selection, and whether it must be evaluated per record. */
export type Selection = Checked & { readonly perRecord: boolean };

export interface FieldExpressions {
  readonly field: StoreFieldInfo;
  readonly compute?: Checked;
  readonly canRead?: Checked;
  readonly canWrite?: Checked;
  readonly onUpdate?: Checked;
  readonly defaultValue?: Checked;
  readonly selection?: Selection;
  /** Guards present but not compiling: they deny. */
  readonly brokenGuards: ReadonlySet<'canRead' | 'canWrite'>;
  /** Problems of the expressions, as saved in `expressionErrors` (guards excluded). */
  readonly errors: readonly ExpressionError[];
}

export interface TableExpressions {
  readonly scope: StoreTableScope;
  readonly tables: ModuleTables;
  readonly byFieldId: ReadonlyMap<string, FieldExpressions>;
  /** Some field is computed or read-guarded: reads evaluate expressions. */
  readonly affectsReads: boolean;
  /** Which write stages have anything to do (a table without expressions skips them all). */
  readonly hasDefaults: boolean;
  readonly hasWriteGuards: boolean;
  readonly hasTriggers: boolean;
}

const GUARD: { type: ValueType; why: string } = { type: 'boolean', why: 'a guard' };

function prefixed(property: string, errors: readonly ExpressionError[]): ExpressionError[] {
  return errors.map((e) => ({ ...e, message: property === 'expression' ? e.message : `${property}: ${e.message}` }));
}

/** Compiles one field's expressions against its table (and the module's tables for select). */
export function compileField(field: StoreFieldInfo, scope: StoreTableScope, tables: ModuleTables): FieldExpressions {
  const props = field.row.props;
  const own = tables.scopeFor(scope);
  const errors: ExpressionError[] = [];
  const brokenGuards = new Set<'canRead' | 'canWrite'>();
  const take = (property: string, compiled: Compiled): Checked | undefined => {
    if (compiled.ok) return compiled;
    errors.push(...prefixed(property, compiled.errors));
    return undefined;
  };
  const out: { -readonly [K in keyof FieldExpressions]?: FieldExpressions[K] } = { field, brokenGuards, errors };

  if (field.fieldType === 'function' && typeof props.expression === 'string') {
    out.compute = take('expression', compile(props.expression, 'expression', own, { self: field.name }));
  }
  if (typeof props.options === 'string') {
    const compiled = compile(props.options, 'expression', own);
    let selection: Selection | undefined;
    let optionTable: StoreTableScope | undefined;
    if (compiled.ok) {
      const t = compiled.type;
      const records = isListType(t) ? t.list : t;
      if (isRecordType(records)) {
        optionTable = records.record as StoreTableScope;
        selection = { ...compiled, perRecord: readsRecord(compiled.program) };
      } else {
        const at = compiled.program.kind === 'expression' ? compiled.program.body.at : { line: 1, column: 1 };
        errors.push(...prefixed('options', [{ ...at, message: `the selection must give records (select TABLE …), not ${typeName(t)}` }]));
      }
    } else {
      take('options', compiled);
    }
    out.selection = selection;
    for (const key of ['optionName', 'optionIcon', 'optionColor'] as const) {
      const source = props[key];
      // Display formulas run for each selectable record: its fields are in scope.
      if (typeof source === 'string' && optionTable) take(key, compile(source, 'expression', tables.scopeFor(optionTable)));
    }
  }
  if (typeof props.onUpdate === 'string') out.onUpdate = take('onUpdate', compile(props.onUpdate, 'trigger', own));
  if (isNx(props.defaultValue) && typeof props.defaultValue.$nx === 'string') {
    out.defaultValue = take('defaultValue.$nx', compile(props.defaultValue.$nx, 'expression', own, { target: field }));
  }
  for (const key of ['canRead', 'canWrite'] as const) {
    const source = props[key];
    if (typeof source !== 'string') continue;
    const compiled = compile(source, 'expression', own, { expect: GUARD });
    if (compiled.ok) out[key] = compiled;
    else brokenGuards.add(key);
  }
  return out as FieldExpressions;
}

/** The texts of the field's expressions: a function's, a selection and its display formulas, a trigger, an `$nx` default, guards. */
export function expressionSources(row: FieldRow): string[] {
  const p = row.props;
  const sources = [
    row.type === 'function' ? p.expression : undefined,
    ...(typeof p.options === 'string' ? [p.options, p.optionName, p.optionIcon, p.optionColor] : []),
    p.onUpdate, isNx(p.defaultValue) ? p.defaultValue.$nx : undefined, p.canRead, p.canWrite,
  ];
  return sources.filter((source): source is string => typeof source === 'string');
}

function hasExpressions(row: FieldRow): boolean {
  return row.type === 'function' || expressionSources(row).length > 0;
}

interface Cache {
  generation: number;
  byTable: Map<number, TableExpressions>;
}
const caches = new WeakMap<EmulatorContext, Cache>();

export function tableExpressions(ctx: EmulatorContext, table: TableRow, fields: readonly FieldRow[]): TableExpressions {
  const generation = schemaGeneration(ctx.db);
  let cache = caches.get(ctx);
  if (!cache || cache.generation !== generation) {
    cache = { generation, byTable: new Map() };
    caches.set(ctx, cache);
  }
  let found = cache.byTable.get(table.key);
  if (!found) {
    const scope = tableScope(table, fields);
    const tables = new ModuleTables(ctx, table.moduleName, [scope]);
    const byFieldId = new Map<string, FieldExpressions>();
    for (const field of scope.fields) {
      if (hasExpressions(field.row)) byFieldId.set(field.id, compileField(field, scope, tables));
    }
    const all = [...byFieldId.values()];
    found = {
      scope, tables, byFieldId,
      affectsReads: all.some((e) => e.field.fieldType === 'function' || e.field.row.props.canRead !== undefined),
      hasDefaults: all.some((e) => e.defaultValue !== undefined),
      hasWriteGuards: all.some((e) => e.field.row.props.canWrite !== undefined),
      hasTriggers: all.some((e) => e.onUpdate !== undefined),
    };
    cache.byTable.set(table.key, found);
  }
  return found;
}
