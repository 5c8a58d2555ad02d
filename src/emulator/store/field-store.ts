import {
  CHOICE_TYPES, PERMISSION_PROPERTIES, type FieldBatchUpdateItem, type FieldCreate, type FieldType, type Option,
} from '../../api/index.ts';
import type { EmulatorContext } from '../context.ts';
import { BadRequestError, NotFoundError } from '../errors.ts';
import type { ApiKeyGrant } from '../options.ts';
import { nextSequenceValue } from './database.ts';
import { refreshExpressionErrors } from './expression-errors.ts';
import { orderedProps } from './field-props.ts';
import { checkNewFieldRequired, checkNewFlags } from './flag-checks.ts';
import {
  GuardCompiler, checkFlagsFitType, isNx, optionsOf, planDefault, planFieldUpdate, planOptions, refTableId, type PlannedOption,
} from './field-rules.ts';
import { publicId } from './ids.ts';
import { requireGrantForProperties } from './permission-grant.ts';
import type { FieldRow, TableRow } from './schema-rows.ts';
import { normalizeRoles, sameJson, transaction } from './schema-writes.ts';
import { requireGrantForStoredEffects, type SavedEffects } from './stored-effects-grant.ts';
import { roleOf } from './table-roles.ts';
import { dropTableIndexes } from './table-indexes.ts';

/**
 * Mutations of fields: create, update and delete, each checked first (field-rules.ts) and then
 * applied in one transaction stamped once, with a schema change event per field, and then the
 * expressions it concerns checked (expression-errors.ts). Also the stored form of field
 * properties (option ids, resolved defaults; their order is in field-props.ts).
 */

/** The seed loader acts with every grant. */
export const TRUSTED: ApiKeyGrant = { key: '(seed)', grants: 'all' };

/** Where an item of a request sits, for error messages: `body`, `body[2]`, `seed.modules[0]…`. */
export type ItemPath = (index: number) => string;

export interface FieldWriteOptions {
  actor: ApiKeyGrant;
  at: ItemPath;
}

// ---- stored form of field properties -------------------------------------------------------

/** Gives new options their stable ids (`o<n>`), keeping `id` first. */
function saveOptions(ctx: EmulatorContext, planned: readonly PlannedOption[]): Option[] {
  return planned.map((o) => {
    const { id, ...rest } = o;
    return { id: id ?? publicId('option', nextSequenceValue(ctx.db, 'option')), ...rest };
  });
}

/** Replaces option names in a choice/multi default by the saved ids; drops ids no longer offered. */
function resolveDefault(type: FieldType, value: unknown, options: readonly Option[]): unknown {
  if (value === undefined || isNx(value) || !CHOICE_TYPES.includes(type)) return value;
  const idOf = (ref: string) => options.find((o) => o.id === ref)?.id ?? options.find((o) => o.name === ref)?.id;
  if (Array.isArray(value)) return value.map((ref: string) => idOf(ref)).filter((id) => id !== undefined);
  return typeof value === 'string' ? idOf(value) : value;
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
 * in the batch and existing fields (400), guards, the flags (400; `required` only on a table
 * without records, as an update making a field required would be), references, options and
 * defaults (400).
 */
export function createFields(
  ctx: EmulatorContext, table: TableRow, inputs: readonly FieldCreate[], opts: FieldWriteOptions,
): FieldRow[] {
  inputs.forEach((input, i) => requireGrantForProperties(opts.actor, input, PERMISSION_PROPERTIES, opts.at(i)));
  const current = ctx.schema.fieldsOf(table.key);
  const existing = new Set(current.map((f) => f.name));
  const batchNames = inputs.map((f) => f.name);
  // Guards are compiled before the transaction: no field of the batch is in scope yet.
  const guards = new GuardCompiler(ctx, table, current, new Map(batchNames.map((name) => [
    name, `field ${name} is created by this request and not in scope yet: set the guard by a later update`,
  ])));
  const plans = inputs.map((input, i): PlannedCreate => {
    const where = opts.at(i);
    if (batchNames.indexOf(input.name) !== i) {
      throw new BadRequestError(`${where}.name: field ${input.name} appears more than once in the batch`);
    }
    if (existing.has(input.name)) {
      throw new BadRequestError(`${where}.name: field ${input.name} already exists in table ${table.moduleName}.${table.name}`);
    }
    if (input.canRead !== undefined) guards.check(input.canRead, `${where}.canRead`);
    if (input.canWrite !== undefined) guards.check(input.canWrite, `${where}.canWrite`);
    checkFlagsFitType(input.type, input, where);
    checkNewFieldRequired(ctx, table, input, where, roleOf(opts.actor));
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
      const props = orderedProps({
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
    requireGrantForStoredEffects(ctx, opts.actor, table, plans.map((plan, i) => ({
      key: keys[i]!, where: opts.at(i), onUpdate: setsTrigger(plan.input), defaultValue: setsDefault(plan.input),
    })));
    // Expressions are checked after the save, the new fields' own and those that name them.
    refreshExpressionErrors(ctx, table, { fieldKeys: keys, fields: [{ table, names: batchNames }], logged: keys }, at);
    return keys.map((key) => fieldByKey(ctx, table, key));
  });
}

/** Whether a request item sets a trigger or a default (removing one sets nothing). */
function setsTrigger(item: { onUpdate?: string | undefined }): boolean {
  return item.onUpdate !== undefined && item.onUpdate !== '';
}
function setsDefault(item: { defaultValue?: unknown }): boolean {
  return item.defaultValue !== undefined && item.defaultValue !== null;
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
  items.forEach((item, i) => requireGrantForProperties(opts.actor, item, PERMISSION_PROPERTIES, opts.at(i)));
  const seen = new Set<string>();
  items.forEach((item, i) => {
    if (seen.has(item.fieldName)) {
      throw new BadRequestError(`${opts.at(i)}.fieldName: field ${item.fieldName} appears more than once in the batch`);
    }
    seen.add(item.fieldName);
  });

  const renamedTo = new Set<string>();
  // Guards see the table as it will be after the batch (renames included).
  const renames = new Map(items.filter((item) => item.name !== undefined).map((item) => [item.fieldName, item.name!]));
  const guards = new GuardCompiler(ctx, table, current.map((f) => ({ ...f, name: renames.get(f.name) ?? f.name })));
  const plans = items.map((item, i) => {
    const where = opts.at(i);
    const field = targets[i]!;
    if (item.name !== undefined && item.name !== field.name) {
      if (byName.has(item.name) || renamedTo.has(item.name)) {
        throw new BadRequestError(`${where}.name: field ${item.name} already exists in table ${table.moduleName}.${table.name}`);
      }
      renamedTo.add(item.name);
    }
    const props = planFieldUpdate(field, item, guards, where);
    checkNewFlags(ctx, table, field, props, where, roleOf(opts.actor));
    return { field, item, props };
  });

  return transaction(ctx, () => {
    const at = ctx.changes.stamp();
    const update = ctx.db.prepare('UPDATE fields SET name = ?, props = ? WHERE id = ?');
    const changed: number[] = [];
    const effects: SavedEffects[] = [];
    for (const [i, { field, item, props }] of plans.entries()) {
      const name = item.name ?? field.name;
      const options = Array.isArray(props.options) ? saveOptions(ctx, props.options as PlannedOption[]) : undefined;
      const saved = orderedProps({
        ...props,
        ...(options ? { options } : {}),
        defaultValue: resolveDefault(field.type, props.defaultValue, options ?? optionsOf(field)),
      });
      if (name === field.name && sameJson(saved, field.props)) continue; // its expressions are checked again below
      update.run(name, JSON.stringify(saved), field.key);
      changed.push(field.key);
      effects.push({ key: field.key, where: opts.at(i), onUpdate: setsTrigger(item), defaultValue: setsDefault(item) });
      // The unique check's index is of no use any more; it is made again if the flag returns.
      if (field.props.unique === true && saved.unique !== true) dropTableIndexes(ctx.db, { tableKey: table.key, fieldIds: [field.id] });
      ctx.changes.schemaChanged('Field', field.id, 'upserted', at);
    }
    requireGrantForStoredEffects(ctx, opts.actor, table, effects);
    // Every field the request names, changed or not (the table around an expression sent again
    // unchanged may have changed since it was last checked), and those naming a renamed field.
    const renamed = plans.filter(({ field, item }) => item.name !== undefined && item.name !== field.name)
      .flatMap(({ field, item }) => [field.name, item.name!]);
    refreshExpressionErrors(ctx, table, { fieldKeys: plans.map(({ field }) => field.key), fields: [{ table, names: renamed }], logged: changed }, at);
    return plans.map(({ field }) => fieldByKey(ctx, table, field.key));
  });
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
    const at = ctx.changes.stamp();
    removeFields(ctx, table.key, fields, at);
    refreshExpressionErrors(ctx, table, { fields: [{ table, names: fields.map((f) => f.name) }] }, at);
    return fields;
  });
}

/** Deletes fields of one table, logging each; their values stay in the records, unread. */
export function removeFields(ctx: EmulatorContext, tableKey: number, fields: readonly { key: number; id: string }[], at: number): void {
  const remove = ctx.db.prepare('DELETE FROM fields WHERE id = ?');
  for (const field of fields) {
    remove.run(field.key);
    ctx.changes.schemaChanged('Field', field.id, 'deleted', at);
  }
  dropTableIndexes(ctx.db, { tableKey, fieldIds: fields.map((f) => f.id) });
}
