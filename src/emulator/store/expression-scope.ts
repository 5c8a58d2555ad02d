import { isReadOnlyType, type Option } from '../../api/index.ts';
import type { EmulatorContext } from '../context.ts';
import type { ExpressionScope, FieldInfo, TableScope } from '../expression/scope.ts';
import { valueTypeOf } from '../expression/scope.ts';
import type { FieldRow, TableRow } from './schema-rows.ts';

/**
 * The schema as the expression language sees it: a table's fields by name, and the tables of the
 * same module that `select` may name. Built from stored rows; names are kept in Maps, so any
 * upstream name (`__proto__` too) is just a key.
 */

export interface StoreFieldInfo extends FieldInfo {
  readonly row: FieldRow;
  /** choice/multi: option id → option name (expressions read choices by name). */
  readonly optionNames: ReadonlyMap<string, string> | undefined;
}

export interface StoreTableScope extends TableScope {
  readonly row: TableRow;
  readonly fields: readonly StoreFieldInfo[];
  field(name: string): StoreFieldInfo | undefined;
}

export function fieldInfo(row: FieldRow): StoreFieldInfo {
  const options = Array.isArray(row.props.options) ? (row.props.options as Option[]) : undefined;
  return {
    name: row.name,
    id: row.id,
    fieldType: row.type,
    valueType: valueTypeOf(row.type),
    writable: !isReadOnlyType(row.type),
    row,
    optionNames: options && new Map(options.map((o) => [o.id, o.name])),
  };
}

export function tableScope(table: TableRow, fields: readonly FieldRow[]): StoreTableScope {
  const infos = fields.map(fieldInfo);
  const byName = new Map(infos.map((f) => [f.name, f]));
  return { key: table.key, name: table.name, row: table, fields: infos, field: (name) => byName.get(name) };
}

/**
 * Tables of one module, each described once on first use. `overrides` replaces a table's field
 * list (the fields as they will be after a batch that is being checked).
 */
export class ModuleTables {
  readonly #ctx: EmulatorContext;
  readonly #moduleName: string;
  readonly #byName = new Map<string, StoreTableScope | null>();

  constructor(ctx: EmulatorContext, moduleName: string, overrides: readonly StoreTableScope[] = []) {
    this.#ctx = ctx;
    this.#moduleName = moduleName;
    for (const t of overrides) this.#byName.set(t.name, t);
  }

  find(name: string): StoreTableScope | undefined {
    let scope = this.#byName.get(name);
    if (scope === undefined) {
      const row = this.#ctx.schema.findTable(this.#moduleName, name);
      scope = row ? tableScope(row, this.#ctx.schema.fieldsOf(row.key)) : null;
      this.#byName.set(name, scope);
    }
    return scope ?? undefined;
  }

  scopeFor(table: StoreTableScope, notInScope?: ReadonlyMap<string, string>): ExpressionScope {
    return { table, findTable: (name) => this.find(name), notInScope };
  }
}
