import { fieldsOf, type Catalog, type MirrorField, type MirrorTable } from '../../mirror/catalog.ts';
import { isLocalReferenceField, localReference, rowWaitedFor, type RowRef } from '../../mirror/local-row-wait.ts';
import type { PendingEdit } from '../../mirror/outbox.ts';
import type { SyncOptions } from '../sync-options.ts';
import { compileConflictPolicies, type ConflictPolicy } from './conflict-policy.ts';
import type { ReadbackScope } from './create-readback.ts';

/** One mirrored table as the push sees it. */
export interface PushTarget {
  table: MirrorTable;
  /** Writable fields: name → type. */
  fieldTypes: ReadonlyMap<string, string>;
  /** Options of the writable choice and multi fields, by field name. */
  fieldOptions: ReadbackScope['fieldOptions'];
  /** The writable fields that can point at a row inserted here, by field name (mirror/local-row-wait.ts). */
  referenceFields: ReadonlyMap<string, MirrorField>;
  policy: ConflictPolicy;
}

/** Each mirrored table as the push sends to it: its writable fields and its conflict policy. */
export function pushTargets(catalog: Catalog, options: SyncOptions): Map<string, PushTarget> {
  const policyOf = compileConflictPolicies(options.conflictPolicy, options.conflictPolicies);
  const targets = new Map<string, PushTarget>();
  for (const table of catalog.tables) {
    const writable = fieldsOf(catalog, table.tableId).filter((f) => !f.readOnly);
    const fieldTypes = new Map(writable.map((f) => [f.fieldName, f.fieldType as string]));
    const fieldOptions = new Map(writable.flatMap((f) => (Array.isArray(f.options) ? [[f.fieldName, f.options] as const] : [])));
    const referenceFields = new Map(writable.filter(isLocalReferenceField).map((f) => [f.fieldName, f]));
    targets.set(table.tableId, { table, fieldTypes, fieldOptions, referenceFields, policy: policyOf(table.moduleName, table.tableName) });
  }
  return targets;
}

/**
 * The row inserted here and not created upstream yet that this edit waits for, if any
 * (mirror/local-row-wait.ts states the rule). Once created, a reference holds the upstream id.
 */
export function waitsFor(edit: PendingEdit, target: PushTarget): RowRef | undefined {
  // Most tables have no reference field: their edits wait only for their own row.
  if (target.referenceFields.size === 0) return rowWaitedFor(edit, edit.operation, NO_REFERENCES);
  const references: (RowRef | undefined)[] = [];
  for (const [name, value] of edit.values) {
    const field = target.referenceFields.get(name);
    if (field !== undefined) references.push(localReference(field, value));
  }
  return rowWaitedFor(edit, edit.operation, references);
}

const NO_REFERENCES: readonly RowRef[] = [];
