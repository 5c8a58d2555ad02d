import {
  CHOICE_TYPES, DYNAMIC_CHOICE_TYPES, NO_CAN_WRITE_TYPES, describeIssues, isReadOnlyType,
  recordValueSchema, type FieldBatchUpdateItem, type FieldType, type Option, type OptionInput,
} from '../../api/index.ts';
import type { EmulatorContext } from '../context.ts';
import { BadRequestError } from '../errors.ts';
import { describeDiagnostic } from '../expression/diagnostics.ts';
import { compile } from '../expression/compile.ts';
import { ModuleTables, tableScope } from './expression-scope.ts';
import type { FieldProps, FieldRow, TableRow } from './schema-rows.ts';
import { normalizeRoles } from './schema-writes.ts';

/**
 * The rules a field request must pass before anything is written: guards that compile, the
 * referenced table, option lists, default values, the flags a type takes, and what an update may
 * change for the field's type. They read the schema but never write it: the writes are in
 * field-store.ts.
 */

/** An option before it is saved: new options have no id yet. */
export type PlannedOption = Omit<Option, 'id'> & { id?: string };

/**
 * Guards are compiled before a field is saved (a guard that does not compile is 400), against the
 * table's fields as `fields` lists them; `notInScope` names fields that exist after the request
 * but may not be named yet (those being created), with the reason.
 */
export class GuardCompiler {
  readonly #tables: ModuleTables;
  readonly #scope;
  readonly #notInScope: ReadonlyMap<string, string> | undefined;

  constructor(ctx: EmulatorContext, table: TableRow, fields: readonly FieldRow[], notInScope?: ReadonlyMap<string, string>) {
    const own = tableScope(table, fields);
    this.#tables = new ModuleTables(ctx, table.moduleName, [own]);
    this.#scope = own;
    this.#notInScope = notInScope;
  }

  check(source: string, where: string): void {
    const compiled = compile(source, 'expression', this.#tables.scopeFor(this.#scope, this.#notInScope), {
      expect: { type: 'boolean', why: 'a guard' },
    });
    if (!compiled.ok) {
      throw new BadRequestError(`${where}: the guard does not compile: ${compiled.errors.map(describeDiagnostic).join('; ')}`);
    }
  }
}

/** Plans a replacement option list: kept options carry an id of the field's current options. */
export function planOptions(inputs: readonly OptionInput[], current: readonly Option[], where: string): PlannedOption[] {
  const ids = new Set<string>();
  const names = new Set<string>();
  return inputs.map((o, i) => {
    const at = `${where}.options[${i}]`;
    if (o.id !== undefined) {
      if (!current.some((c) => c.id === o.id)) throw new BadRequestError(`${at}.id: ${o.id} is not an option of this field`);
      if (ids.has(o.id)) throw new BadRequestError(`${at}.id: option ${o.id} appears more than once`);
      ids.add(o.id);
    }
    if (names.has(o.name)) throw new BadRequestError(`${at}.name: duplicate option name ${JSON.stringify(o.name)}`);
    names.add(o.name);
    const planned: PlannedOption = { name: o.name, order: o.order ?? i };
    if (o.id !== undefined) planned.id = o.id;
    for (const key of ['labels', 'color', 'textColor', 'icon'] as const) {
      if (o[key] !== undefined) (planned as Record<string, unknown>)[key] = o[key];
    }
    return planned;
  });
}

export function isNx(value: unknown): value is { $nx: string } {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && '$nx' in value;
}

/**
 * Checks a default value against the field's type and returns its stored form (undefined for
 * `null`, which removes the default). Choice and multi defaults name options by id or by name.
 */
export function planDefault(type: FieldType, value: unknown, options: readonly PlannedOption[], where: string): unknown {
  const at = `${where}.defaultValue`;
  if (value === null) return undefined;
  if (isReadOnlyType(type)) throw new BadRequestError(`${at}: fields of type ${type} are computed and take no default value`);
  if (isNx(value)) return value;
  const parsed = recordValueSchema(type, 'create').safeParse(value);
  if (!parsed.success) throw new BadRequestError(describeIssues(parsed.error.issues, at));
  if (CHOICE_TYPES.includes(type) && parsed.data !== null) {
    for (const ref of Array.isArray(parsed.data) ? (parsed.data as string[]) : [parsed.data as string]) {
      if (!options.some((o) => o.id === ref || o.name === ref)) {
        throw new BadRequestError(`${at}: ${JSON.stringify(ref)} is not an option of this field (give an option id or name)`);
      }
    }
  }
  return parsed.data;
}

/**
 * `required: true` and `unique: true` are refused for computed types (`false` is accepted): their
 * values are never written, so no write could be refused for them, and a flag that holds nothing
 * would tell a client something untrue.
 */
export function checkFlagsFitType(type: FieldType, flags: { required?: boolean | undefined; unique?: boolean | undefined }, where: string): void {
  if (!isReadOnlyType(type)) return;
  for (const flag of ['required', 'unique'] as const) {
    if (flags[flag] === true) {
      throw new BadRequestError(`${where}.${flag}: ${flag} is not accepted for ${type} fields: their values are computed, never written`);
    }
  }
}

export function refTableId(ctx: EmulatorContext, table: TableRow, refTableName: string, where: string): string {
  const ref = ctx.schema.findTable(table.moduleName, refTableName);
  if (!ref) {
    throw new BadRequestError(`${where}.refTableName: table ${refTableName} not found in module ${table.moduleName}`);
  }
  return ref.id;
}

export function optionsOf(field: FieldRow): Option[] {
  return Array.isArray(field.props.options) ? field.props.options : [];
}

/** The field's properties after the update, with new options still without ids. */
export function planFieldUpdate(field: FieldRow, item: FieldBatchUpdateItem, guards: GuardCompiler, where: string): FieldProps {
  const type = field.type;
  const choice = CHOICE_TYPES.includes(type);
  const dynamic = DYNAMIC_CHOICE_TYPES.includes(type);
  const props: FieldProps = { ...field.props };
  if (item.options !== undefined) {
    if (Array.isArray(item.options)) {
      if (!choice) throw new BadRequestError(`${where}.options: an options array is only for choice and multi fields, not ${type}`);
      props.options = planOptions(item.options, optionsOf(field), where) as Option[];
    } else {
      if (!dynamic) throw new BadRequestError(`${where}.options: an options expression is only for dchoice and dmulti fields, not ${type}`);
      props.options = item.options;
    }
  }
  for (const key of ['optionName', 'optionIcon', 'optionColor'] as const) {
    if (item[key] === undefined) continue;
    if (!dynamic) throw new BadRequestError(`${where}.${key}: ${key} is only for dchoice and dmulti fields, not ${type}`);
    props[key] = item[key];
  }
  if (item.expression !== undefined) {
    if (type !== 'function') throw new BadRequestError(`${where}.expression: expression is only for function fields, not ${type}`);
    props.expression = item.expression;
  }
  if (item.canWrite !== undefined && item.canWrite !== null && NO_CAN_WRITE_TYPES.includes(type)) {
    throw new BadRequestError(`${where}.canWrite: canWrite is not accepted for ${type} fields`);
  }
  checkFlagsFitType(type, item, where);
  for (const key of ['canRead', 'canWrite'] as const) {
    const guard = item[key];
    if (guard === undefined) continue;
    if (guard === null) props[key] = undefined;
    else {
      guards.check(guard, `${where}.${key}`);
      props[key] = guard;
    }
  }
  if (item.labels !== undefined) props.labels = item.labels;
  for (const key of ['required', 'unique', 'index', 'search'] as const) {
    if (item[key] !== undefined) props[key] = item[key];
  }
  if (item.onUpdate !== undefined) props.onUpdate = item.onUpdate === '' ? undefined : item.onUpdate;
  if (item.readRoles !== undefined) props.readRoles = normalizeRoles(item.readRoles);
  if (item.writeRoles !== undefined) props.writeRoles = normalizeRoles(item.writeRoles);
  const finalOptions = (Array.isArray(props.options) ? props.options : []) as PlannedOption[];
  if (item.defaultValue !== undefined) props.defaultValue = planDefault(type, item.defaultValue, finalOptions, where);
  return props;
}
