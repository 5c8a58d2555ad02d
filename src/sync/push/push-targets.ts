import { fieldsOf, type Catalog } from '../../mirror/catalog.ts';
import type { PendingEdit } from '../../mirror/outbox.ts';
import type { SyncOptions } from '../sync-options.ts';
import { compileConflictPolicies } from './conflict-policy.ts';
import type { PushTarget } from './table-push.ts';

/** Each mirrored table as the push sends to it: its writable fields and its conflict policy. */
export function pushTargets(catalog: Catalog, options: SyncOptions): Map<string, PushTarget> {
  const policyOf = compileConflictPolicies(options.conflictPolicy, options.conflictPolicies);
  const targets = new Map<string, PushTarget>();
  for (const table of catalog.tables) {
    const writable = fieldsOf(catalog, table.tableId).filter((f) => !f.readOnly);
    const fieldTypes = new Map(writable.map((f) => [f.fieldName, f.fieldType as string]));
    const fieldOptions = new Map(writable.flatMap((f) => (Array.isArray(f.options) ? [[f.fieldName, f.options] as const] : [])));
    targets.set(table.tableId, { table, fieldTypes, fieldOptions, policy: policyOf(table.moduleName, table.tableName) });
  }
  return targets;
}

/**
 * A row inserted here and not created upstream yet (its id is negative until then) that this
 * edit is of, or that its references point at, if any: the edit waits for that row's create, whether or not the
 * create is due now. Once created, the reference holds the upstream id.
 */
export function waitsFor(edit: PendingEdit, target: PushTarget, catalog: Catalog): { tableId: string; recordId: number } | undefined {
  if (edit.operation === 'delete') return undefined;
  // An update of such a row itself (its insert failed, or is backing off, so it is not due with
  // it): it goes with the create, or once the row has its upstream id; never as a PATCH of a
  // temporary id.
  if (edit.operation === 'update' && edit.recordId < 0) return { tableId: edit.tableId, recordId: edit.recordId };
  for (const [name, value] of edit.values) {
    if (target.fieldTypes.get(name) !== 'reference' || typeof value !== 'number' || value >= 0) continue;
    const field = catalog.fields.find((f) => f.tableId === target.table.tableId && f.fieldName === name);
    return { tableId: field?.refTableId ?? target.table.tableId, recordId: value };
  }
  return undefined;
}
