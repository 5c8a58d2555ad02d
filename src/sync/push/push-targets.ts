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
    const fieldTypes = new Map(fieldsOf(catalog, table.tableId).filter((f) => !f.readOnly).map((f) => [f.fieldName, f.fieldType as string]));
    targets.set(table.tableId, { table, fieldTypes, policy: policyOf(table.moduleName, table.tableName) });
  }
  return targets;
}

/** `tableId:recordId` of a locally created row this edit's references point at, if any. */
export function waitsFor(edit: PendingEdit, target: PushTarget, catalog: Catalog): string | undefined {
  if (edit.operation === 'delete') return undefined;
  for (const [name, value] of edit.values) {
    if (target.fieldTypes.get(name) !== 'reference' || typeof value !== 'number' || value >= 0) continue;
    const field = catalog.fields.find((f) => f.tableId === target.table.tableId && f.fieldName === name);
    return `${field?.refTableId ?? target.table.tableId}:${value}`;
  }
  return undefined;
}
