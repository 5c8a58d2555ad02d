import {
  CHOICE_TYPES, DYNAMIC_CHOICE_TYPES, NO_CAN_WRITE_TYPES, PERMISSION_PROPERTIES, REFERENCE_TYPES, describeIssues,
  isReadOnlyType, recordValueSchema,
  type FieldBatchUpdateItem, type FieldCreate, type FieldType, type Option, type OptionInput, type TableCreate,
  type TablePatch,
} from '../../api/index.ts';
import type { ModuleCreate } from '../admin-contract.ts';
import type { EmulatorContext } from '../context.ts';
import { BadRequestError, ForbiddenError, NotFoundError } from '../errors.ts';
import { checkGuard } from '../expression/guard-check.ts';
import { MANAGE_PERMISSIONS, hasGrant, type ApiKeyGrant } from '../options.ts';
import { nextSequenceValue } from './database.ts';
import { publicId } from './ids.ts';
import type { FieldProps, FieldRow, ModuleProps, ModuleRow, TableProps, TableRow } from './schema-rows.ts';
import { dropTableIndexes } from './table-indexes.ts';

/**
 * Mutations of modules, tables and fields. Every mutation validates everything first, then
 * applies in one transaction stamped once, appending schema change events; a failure leaves the
 * state unchanged. Routes, the admin surface and the seed loader all go through here.
 */

export const DEFAULT_WORKSPACE_NAME = 'Demo workspace';
export const DEFAULT_ROLES: readonly string[] = ['admin', 'editor'];
export const DEFAULT_MODULE_ICON = { color: '#546e7a', filling: 0, icon: 'folder' } as const;
export const DEFAULT_TABLE_ICON = { color: '#1e88e5', filling: 0, icon: 'table' } as const;

/** The seed loader acts with every grant. */
export const TRUSTED: ApiKeyGrant = { key: '(seed)', grants: 'all' };

/** Where an item of a request sits, for error messages: `body`, `body[2]`, `seed.modules[0]…`. */
export type ItemPath = (index: number) => string;

export interface FieldWriteOptions {
  actor: ApiKeyGrant;
  at: ItemPath;
}

// ---- workspace name ------------------------------------------------------------------------

export function workspaceName(ctx: EmulatorContext): string {
  const row = ctx.db.prepare(`SELECT value FROM meta WHERE key = 'workspace_name'`).get() as { value: string } | undefined;
  return row?.value ?? DEFAULT_WORKSPACE_NAME;
}

export function setWorkspaceName(ctx: EmulatorContext, name: string): void {
  ctx.db
    .prepare(`INSERT INTO meta (key, value) VALUES ('workspace_name', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value`)
    .run(name);
}

// ---- helpers -------------------------------------------------------------------------------

/** `user` is a deprecated alias of `editor`: stored and returned as `editor`, without duplicates. */
export function normalizeRoles(roles: readonly string[]): string[] {
  return [...new Set(roles.map((r) => (r === 'user' ? 'editor' : r)))];
}

function transaction<T>(ctx: EmulatorContext, fn: () => T): T {
  return ctx.db.transaction(fn)();
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

// ---- modules -------------------------------------------------------------------------------

export function createModule(ctx: EmulatorContext, input: ModuleCreate): ModuleRow {
  return transaction(ctx, () => {
    const exists = ctx.db.prepare('SELECT 1 FROM modules WHERE name = ?').get(input.name);
    if (exists) throw new BadRequestError(`module ${input.name} already exists`);
    const props: ModuleProps = {
      labels: input.labels ?? {},
      icon: { ...DEFAULT_MODULE_ICON, ...input.icon },
      isHidden: input.isHidden ?? false,
      hideNavigation: input.hideNavigation ?? false,
      openRoles: normalizeRoles(input.openRoles ?? DEFAULT_ROLES),
    };
    const key = Number(
      ctx.db.prepare('INSERT INTO modules (name, props) VALUES (?, ?)').run(input.name, JSON.stringify(props)).lastInsertRowid,
    );
    ctx.changes.schemaChanged('Module', publicId('module', key), 'upserted', ctx.changes.stamp());
    return ctx.schema.requireModule(input.name);
  });
}

/** Deletes a module with its tables, fields, records and record change logs. */
export function deleteModule(ctx: EmulatorContext, name: string): { id: string } {
  return transaction(ctx, () => {
    const mod = ctx.schema.requireModule(name);
    const at = ctx.changes.stamp();
    dropTables(ctx, ctx.schema.tablesOf(mod.key), at);
    ctx.db.prepare('DELETE FROM modules WHERE id = ?').run(mod.key);
    ctx.changes.schemaChanged('Module', mod.id, 'deleted', at);
    return { id: mod.id };
  });
}

// ---- tables --------------------------------------------------------------------------------

type TableRoleLists = Pick<TablePatch, 'createRoles' | 'deleteRoles' | 'readRoles' | 'writeRoles'>;
export type TableInput = TableCreate & TableRoleLists;

const ROLE_LISTS = ['createRoles', 'deleteRoles', 'readRoles', 'writeRoles'] as const;

export function createTable(ctx: EmulatorContext, moduleName: string, input: TableInput): TableRow {
  return transaction(ctx, () => {
    const mod = ctx.schema.requireModule(moduleName);
    if (ctx.schema.findTable(moduleName, input.name)) {
      throw new BadRequestError(`table ${input.name} already exists in module ${moduleName}`);
    }
    const props: TableProps = {
      labels: input.labels ?? {},
      icon: { ...DEFAULT_TABLE_ICON, ...input.icon },
      hasFiles: input.hasFiles ?? false,
      hasGlobalSearch: input.hasGlobalSearch ?? false,
      hasHistory: input.hasHistory ?? false,
      isEmailLinkingEnabled: input.isEmailLinkingEnabled ?? false,
      isHidden: input.isHidden ?? false,
    };
    for (const list of ROLE_LISTS) props[list] = normalizeRoles(input[list] ?? DEFAULT_ROLES);
    const key = Number(
      ctx.db
        .prepare('INSERT INTO tables (module_id, name, props) VALUES (?, ?, ?)')
        .run(mod.key, input.name, JSON.stringify(props)).lastInsertRowid,
    );
    ctx.changes.schemaChanged('Table', publicId('table', key), 'upserted', ctx.changes.stamp());
    return ctx.schema.tableByKey(key)!;
  });
}

/** Renames, toggles flags, sets roles; `labels` replaces the map, `icon` merges into the current one. */
export function updateTable(ctx: EmulatorContext, table: TableRow, patch: TablePatch): TableRow {
  return transaction(ctx, () => {
    const name = patch.name ?? table.name;
    if (name !== table.name && ctx.schema.findTable(table.moduleName, name)) {
      throw new BadRequestError(`table ${name} already exists in module ${table.moduleName}`);
    }
    const props: TableProps = { ...table.props };
    if (patch.labels !== undefined) props.labels = patch.labels;
    if (patch.icon !== undefined) props.icon = { ...DEFAULT_TABLE_ICON, ...table.props.icon, ...patch.icon };
    for (const flag of ['hasFiles', 'hasGlobalSearch', 'hasHistory', 'isEmailLinkingEnabled', 'isHidden'] as const) {
      if (patch[flag] !== undefined) props[flag] = patch[flag];
    }
    for (const list of ROLE_LISTS) {
      const roles = patch[list];
      if (roles !== undefined) props[list] = normalizeRoles(roles);
    }
    if (name === table.name && sameJson(props, table.props)) return table;
    ctx.db.prepare('UPDATE tables SET name = ?, props = ? WHERE id = ?').run(name, JSON.stringify(props), table.key);
    ctx.changes.schemaChanged('Table', table.id, 'upserted', ctx.changes.stamp());
    return ctx.schema.tableByKey(table.key)!;
  });
}

/**
 * Deletes a table with its fields, its records and its record change log, and the reference and
 * reverse fields of other tables that point at it.
 */
export function deleteTable(ctx: EmulatorContext, table: TableRow): { id: string } {
  return transaction(ctx, () => {
    dropTables(ctx, [table], ctx.changes.stamp());
    return { id: table.id };
  });
}

/**
 * Drops tables and everything of theirs. Reference and reverse fields of the remaining tables
 * that point at one of them are dropped first: the spec allows no 400 on a table delete, and a
 * field whose table is gone cannot be read or written.
 */
function dropTables(ctx: EmulatorContext, tables: readonly TableRow[], at: number): void {
  const keys = new Set(tables.map((t) => t.key));
  const referring = referringFields(ctx, tables.map((t) => t.id)).filter((f) => !keys.has(f.tableKey));
  for (const [tableKey, fields] of Map.groupBy(referring, (f) => f.tableKey)) removeFields(ctx, tableKey, fields, at);
  for (const table of tables) {
    for (const field of ctx.schema.fieldsOf(table.key)) ctx.changes.schemaChanged('Field', field.id, 'deleted', at);
    ctx.db.prepare('DELETE FROM records WHERE table_id = ?').run(table.key);
    ctx.changes.dropTable(table.key);
    ctx.db.prepare('DELETE FROM fields WHERE table_id = ?').run(table.key);
    ctx.db.prepare('DELETE FROM tables WHERE id = ?').run(table.key);
    dropTableIndexes(ctx.db, { tableKey: table.key });
    ctx.changes.schemaChanged('Table', table.id, 'deleted', at);
  }
}

/** Reference and reverse fields whose `refTableId` is one of `tableIds`, in creation order. */
function referringFields(ctx: EmulatorContext, tableIds: readonly string[]): { key: number; id: string; tableKey: number }[] {
  const rows = ctx.db
    .prepare(
      `SELECT id, table_id FROM fields
       WHERE type IN (SELECT value FROM json_each(?)) AND json_extract(props, '$.refTableId') IN (SELECT value FROM json_each(?))
       ORDER BY id`,
    )
    .all(JSON.stringify(REFERENCE_TYPES), JSON.stringify(tableIds)) as { id: number; table_id: number }[];
  return rows.map((r) => ({ key: r.id, id: publicId('field', r.id), tableKey: r.table_id }));
}

/** Deletes fields of one table, logging each; their values stay in the records, unread. */
function removeFields(ctx: EmulatorContext, tableKey: number, fields: readonly { key: number; id: string }[], at: number): void {
  const remove = ctx.db.prepare('DELETE FROM fields WHERE id = ?');
  for (const field of fields) {
    remove.run(field.key);
    ctx.changes.schemaChanged('Field', field.id, 'deleted', at);
  }
  dropTableIndexes(ctx.db, { tableKey, fieldIds: fields.map((f) => f.id) });
}

// ---- field validation helpers --------------------------------------------------------------

/** An option before it is saved: new options have no id yet. */
type PlannedOption = Omit<Option, 'id'> & { id?: string };

function requirePermissionGrant(actor: ApiKeyGrant, item: object, where: string): void {
  if (hasGrant(actor, MANAGE_PERMISSIONS)) return;
  for (const property of PERMISSION_PROPERTIES) {
    if ((item as Record<string, unknown>)[property] !== undefined) {
      throw new ForbiddenError(
        `${where}.${property}: setting ${property} needs the grant ${MANAGE_PERMISSIONS}, which this API key lacks`,
      );
    }
  }
}

function checkGuardAt(source: string, notInScope: readonly string[], where: string): void {
  const problem = checkGuard(source, notInScope);
  if (problem !== undefined) throw new BadRequestError(`${where}: the guard does not compile: ${problem}`);
}

/** Plans a replacement option list: kept options carry an id of the field's current options. */
function planOptions(inputs: readonly OptionInput[], current: readonly Option[], where: string): PlannedOption[] {
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

/** Gives new options their stable ids (`o<n>`), keeping `id` first. */
function saveOptions(ctx: EmulatorContext, planned: readonly PlannedOption[]): Option[] {
  return planned.map((o) => {
    const { id, ...rest } = o;
    return { id: id ?? publicId('option', nextSequenceValue(ctx.db, 'option')), ...rest };
  });
}

function isNx(value: unknown): value is { $nx: string } {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && '$nx' in value;
}

/**
 * Checks a default value against the field's type and returns its stored form (undefined for
 * `null`, which removes the default). Choice and multi defaults name options by id or by name.
 */
function planDefault(type: FieldType, value: unknown, options: readonly PlannedOption[], where: string): unknown {
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

/** Replaces option names in a choice/multi default by the saved ids; drops ids no longer offered. */
function resolveDefault(type: FieldType, value: unknown, options: readonly Option[]): unknown {
  if (value === undefined || isNx(value) || !CHOICE_TYPES.includes(type)) return value;
  const idOf = (ref: string) => options.find((o) => o.id === ref)?.id ?? options.find((o) => o.name === ref)?.id;
  if (Array.isArray(value)) return value.map((ref: string) => idOf(ref)).filter((id) => id !== undefined);
  return typeof value === 'string' ? idOf(value) : value;
}

const PROPERTY_ORDER = [
  'labels', 'variant', 'required', 'unique', 'index', 'search', 'defaultValue', 'onUpdate', 'options', 'optionName',
  'optionIcon', 'optionColor', 'expression', 'expressionErrors', 'refTableId', 'readRoles', 'writeRoles', 'canRead',
  'canWrite', 'syncedFrom', 'binding',
] as const satisfies readonly (keyof FieldProps)[];

/** Stored field properties in one fixed order, without undefined entries. */
function ordered(props: FieldProps): FieldProps {
  const out: Record<string, unknown> = {};
  for (const key of PROPERTY_ORDER) if (props[key] !== undefined) out[key] = props[key];
  return out as FieldProps;
}

function refTableId(ctx: EmulatorContext, table: TableRow, refTableName: string, where: string): string {
  const ref = ctx.schema.findTable(table.moduleName, refTableName);
  if (!ref) {
    throw new BadRequestError(`${where}.refTableName: table ${refTableName} not found in module ${table.moduleName}`);
  }
  return ref.id;
}

// ---- fields: create ------------------------------------------------------------------------

interface PlannedCreate {
  input: FieldCreate;
  options: PlannedOption[] | undefined;
  defaultValue: unknown;
  refTableId: string | undefined;
}

/**
 * Creates fields in one transaction, appended after the table's existing fields. Checks, in this
 * order for every item before anything is written: the permission grant (403), duplicate names
 * in the batch and existing fields (400), guards, references, options and defaults (400).
 */
export function createFields(
  ctx: EmulatorContext, table: TableRow, inputs: readonly FieldCreate[], opts: FieldWriteOptions,
): FieldRow[] {
  inputs.forEach((input, i) => requirePermissionGrant(opts.actor, input, opts.at(i)));
  const existing = new Set(ctx.schema.fieldsOf(table.key).map((f) => f.name));
  const batchNames = inputs.map((f) => f.name);
  const plans = inputs.map((input, i): PlannedCreate => {
    const where = opts.at(i);
    if (batchNames.indexOf(input.name) !== i) {
      throw new BadRequestError(`${where}.name: field ${input.name} appears more than once in the batch`);
    }
    if (existing.has(input.name)) {
      throw new BadRequestError(`${where}.name: field ${input.name} already exists in table ${table.moduleName}.${table.name}`);
    }
    // Guards are compiled before the transaction: no field of the batch is in scope yet.
    if (input.canRead !== undefined) checkGuardAt(input.canRead, batchNames, `${where}.canRead`);
    if (input.canWrite !== undefined) checkGuardAt(input.canWrite, batchNames, `${where}.canWrite`);
    const options = CHOICE_TYPES.includes(input.type)
      ? planOptions(Array.isArray(input.options) ? input.options : [], [], where)
      : undefined;
    return {
      input,
      options,
      defaultValue: input.defaultValue === undefined ? undefined : planDefault(input.type, input.defaultValue, options ?? [], where),
      refTableId: input.refTableName ? refTableId(ctx, table, input.refTableName, where) : undefined,
    };
  });

  return transaction(ctx, () => {
    const at = ctx.changes.stamp();
    const last = ctx.db.prepare('SELECT MAX(position) AS p FROM fields WHERE table_id = ?').get(table.key) as { p: number | null };
    let position = last.p ?? 0;
    const insert = ctx.db.prepare('INSERT INTO fields (table_id, name, type, position, props) VALUES (?, ?, ?, ?, ?)');
    const keys = plans.map((plan) => {
      const f = plan.input;
      const options = plan.options && saveOptions(ctx, plan.options);
      const props = ordered({
        labels: f.labels,
        variant: f.type === 'string' ? (f.variant ?? 'text') : undefined,
        required: f.required ?? false,
        unique: f.unique ?? false,
        index: f.index ?? false,
        search: f.search ?? false,
        defaultValue: resolveDefault(f.type, plan.defaultValue, options ?? []),
        onUpdate: f.onUpdate === '' ? undefined : f.onUpdate,
        options: options ?? (typeof f.options === 'string' ? f.options : undefined),
        optionName: f.optionName,
        optionIcon: f.optionIcon,
        optionColor: f.optionColor,
        expression: f.expression,
        refTableId: plan.refTableId,
        readRoles: f.readRoles && normalizeRoles(f.readRoles),
        writeRoles: f.writeRoles && normalizeRoles(f.writeRoles),
        canRead: f.canRead,
        canWrite: f.canWrite,
      });
      position++;
      const key = Number(insert.run(table.key, f.name, f.type, position, JSON.stringify(props)).lastInsertRowid);
      ctx.changes.schemaChanged('Field', publicId('field', key), 'upserted', at);
      return key;
    });
    return keys.map((key) => fieldByKey(ctx, table, key));
  });
}

function fieldByKey(ctx: EmulatorContext, table: TableRow, key: number): FieldRow {
  const field = ctx.schema.fieldsOf(table.key).find((f) => f.key === key);
  if (!field) throw new Error(`field ${key} vanished inside its own transaction`);
  return field;
}

// ---- fields: update ------------------------------------------------------------------------

/**
 * Updates fields in one transaction. `fieldName` names fields as they are before the batch; a
 * rename may not take the current name of another field nor the target of another rename.
 * Checks: unknown fields (404), the grant (403), then duplicates and every rule (400).
 */
export function updateFields(
  ctx: EmulatorContext, table: TableRow, items: readonly FieldBatchUpdateItem[], opts: FieldWriteOptions,
): FieldRow[] {
  const current = ctx.schema.fieldsOf(table.key);
  const byName = new Map(current.map((f) => [f.name, f]));
  const targets = items.map((item, i) => {
    const field = byName.get(item.fieldName);
    if (!field) {
      throw new NotFoundError(`${opts.at(i)}.fieldName: field ${item.fieldName} not found in table ${table.moduleName}.${table.name}`);
    }
    return field;
  });
  items.forEach((item, i) => requirePermissionGrant(opts.actor, item, opts.at(i)));
  const seen = new Set<string>();
  items.forEach((item, i) => {
    if (seen.has(item.fieldName)) {
      throw new BadRequestError(`${opts.at(i)}.fieldName: field ${item.fieldName} appears more than once in the batch`);
    }
    seen.add(item.fieldName);
  });

  const renamedTo = new Set<string>();
  const plans = items.map((item, i) => {
    const where = opts.at(i);
    const field = targets[i]!;
    if (item.name !== undefined && item.name !== field.name) {
      if (byName.has(item.name) || renamedTo.has(item.name)) {
        throw new BadRequestError(`${where}.name: field ${item.name} already exists in table ${table.moduleName}.${table.name}`);
      }
      renamedTo.add(item.name);
    }
    return { field, item, props: planFieldUpdate(field, item, where) };
  });

  return transaction(ctx, () => {
    const at = ctx.changes.stamp();
    const update = ctx.db.prepare('UPDATE fields SET name = ?, props = ? WHERE id = ?');
    for (const { field, item, props } of plans) {
      const name = item.name ?? field.name;
      const options = Array.isArray(props.options) ? saveOptions(ctx, props.options as PlannedOption[]) : undefined;
      const saved = ordered({
        ...props,
        ...(options ? { options } : {}),
        defaultValue: resolveDefault(field.type, props.defaultValue, options ?? optionsOf(field)),
      });
      if (name === field.name && sameJson(saved, field.props)) continue;
      update.run(name, JSON.stringify(saved), field.key);
      // The unique check's index is of no use any more; it is made again if the flag returns.
      if (field.props.unique === true && saved.unique !== true) dropTableIndexes(ctx.db, { tableKey: table.key, fieldIds: [field.id] });
      ctx.changes.schemaChanged('Field', field.id, 'upserted', at);
    }
    return plans.map(({ field }) => fieldByKey(ctx, table, field.key));
  });
}

function optionsOf(field: FieldRow): Option[] {
  return Array.isArray(field.props.options) ? field.props.options : [];
}

/** The field's properties after the update, with new options still without ids. */
function planFieldUpdate(field: FieldRow, item: FieldBatchUpdateItem, where: string): FieldProps {
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
  for (const key of ['canRead', 'canWrite'] as const) {
    const guard = item[key];
    if (guard === undefined) continue;
    if (guard === null) props[key] = undefined;
    else {
      checkGuardAt(guard, [], `${where}.${key}`);
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

// ---- fields: delete ------------------------------------------------------------------------

/** Deletes fields in one transaction; returns them as they were. */
export function deleteFields(ctx: EmulatorContext, table: TableRow, names: readonly string[], at: ItemPath): FieldRow[] {
  const byName = new Map(ctx.schema.fieldsOf(table.key).map((f) => [f.name, f]));
  const fields = names.map((name, i) => {
    const field = byName.get(name);
    if (!field) throw new NotFoundError(`${at(i)}: field ${name} not found in table ${table.moduleName}.${table.name}`);
    return field;
  });
  names.forEach((name, i) => {
    if (names.indexOf(name) !== i) throw new BadRequestError(`${at(i)}: field ${name} appears more than once`);
  });
  return transaction(ctx, () => {
    removeFields(ctx, table.key, fields, ctx.changes.stamp());
    return fields;
  });
}
