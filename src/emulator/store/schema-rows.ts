import type { Field, FieldType, Module, Table } from '../../api/index.ts';
import { NotFoundError } from '../errors.ts';
import type { Db } from './db.ts';
import { publicId } from './ids.ts';

/** Stored properties of each schema object: everything of the response but id, name, children. */
export type ModuleProps = Omit<Module, 'id' | 'name' | 'tables'>;
export type TableProps = Omit<Table, 'id' | 'name' | 'fields'>;
export type FieldProps = Omit<Field, 'id' | 'name' | 'type'>;

export interface ModuleRow {
  key: number;
  id: string;
  name: string;
  props: ModuleProps;
}

export interface TableRow {
  key: number;
  id: string;
  moduleKey: number;
  moduleName: string;
  name: string;
  props: TableProps;
}

export interface FieldRow {
  key: number;
  id: string;
  tableKey: number;
  name: string;
  type: FieldType;
  position: number;
  props: FieldProps;
}

interface RawModule { id: number; name: string; props: string }
interface RawTable { id: number; module_id: number; module_name: string; name: string; props: string }
export interface RawField { id: number; table_id: number; name: string; type: string; position: number; props: string }

export function toModuleRow(r: RawModule): ModuleRow {
  return { key: r.id, id: publicId('module', r.id), name: r.name, props: JSON.parse(r.props) as ModuleProps };
}

export function toTableRow(r: RawTable): TableRow {
  return {
    key: r.id,
    id: publicId('table', r.id),
    moduleKey: r.module_id,
    moduleName: r.module_name,
    name: r.name,
    props: JSON.parse(r.props) as TableProps,
  };
}

export function toFieldRow(r: RawField): FieldRow {
  return {
    key: r.id,
    id: publicId('field', r.id),
    tableKey: r.table_id,
    name: r.name,
    type: r.type as FieldType,
    position: r.position,
    props: JSON.parse(r.props) as FieldProps,
  };
}

const TABLE_SELECT = `SELECT t.id, t.module_id, m.name AS module_name, t.name, t.props
  FROM tables t JOIN modules m ON m.id = t.module_id`;

/** Read-side look-ups of schema objects by name, shared by every route. */
export class SchemaLookup {
  readonly #db: Db;
  constructor(db: Db) {
    this.#db = db;
  }

  modules(): ModuleRow[] {
    return (this.#db.prepare('SELECT id, name, props FROM modules ORDER BY id').all() as RawModule[]).map(toModuleRow);
  }

  requireModule(name: string): ModuleRow {
    const row = this.#db.prepare('SELECT id, name, props FROM modules WHERE name = ?').get(name) as RawModule | undefined;
    if (!row) throw new NotFoundError(`module ${name} not found`);
    return toModuleRow(row);
  }

  tablesOf(moduleKey: number): TableRow[] {
    return (this.#db.prepare(`${TABLE_SELECT} WHERE t.module_id = ? ORDER BY t.id`).all(moduleKey) as RawTable[]).map(
      toTableRow,
    );
  }

  findTable(moduleName: string, tableName: string): TableRow | undefined {
    const row = this.#db.prepare(`${TABLE_SELECT} WHERE m.name = ? AND t.name = ?`).get(moduleName, tableName) as
      | RawTable
      | undefined;
    return row && toTableRow(row);
  }

  /** The table, or 404 naming the module or the table that is missing. */
  requireTable(moduleName: string, tableName: string): TableRow {
    const table = this.findTable(moduleName, tableName);
    if (table) return table;
    this.requireModule(moduleName);
    throw new NotFoundError(`table ${moduleName}.${tableName} not found`);
  }

  tableByKey(key: number): TableRow | undefined {
    const row = this.#db.prepare(`${TABLE_SELECT} WHERE t.id = ?`).get(key) as RawTable | undefined;
    return row && toTableRow(row);
  }

  fieldsOf(tableKey: number): FieldRow[] {
    return (
      this.#db
        .prepare('SELECT id, table_id, name, type, position, props FROM fields WHERE table_id = ? ORDER BY position, id')
        .all(tableKey) as RawField[]
    ).map(toFieldRow);
  }

  requireField(table: TableRow, fieldName: string): FieldRow {
    const row = this.#db
      .prepare('SELECT id, table_id, name, type, position, props FROM fields WHERE table_id = ? AND name = ?')
      .get(table.key, fieldName) as RawField | undefined;
    if (!row) throw new NotFoundError(`field ${fieldName} not found in table ${table.moduleName}.${table.name}`);
    return toFieldRow(row);
  }
}
