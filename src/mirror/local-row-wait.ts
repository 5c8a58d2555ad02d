import type { MirrorField } from './catalog.ts';

/** A row of a mirrored table, by its local id (negative for a row inserted here and not created upstream yet). */
export interface RowRef {
  tableId: string;
  recordId: number;
}

/** A row as a key of sets and maps: `table:id`. */
export function rowKey(row: RowRef): string {
  return `${row.tableId}:${row.recordId}`;
}

/**
 * The rule of what a record's pending edit waits for: a row inserted here and not created
 * upstream yet, whether or not its create is due now. The push applies it to the edits it reads
 * (sync/push/push-targets.ts), and `waitingEdits` to the outbox and the rows, so that a wait
 * shows before a push has met it (operations/waiting-edits.ts).
 * - A delete waits for nothing.
 * - An update of such a row itself (its insert failed or backs off, so it is not pending with
 *   it) waits for that row's create: it goes with the create, or once the row has its upstream
 *   id, never as a PATCH of a temporary id.
 * - Otherwise, the first of the edit's references to such a row (`references`: a create's in
 *   field order, an update's in capture order, each from `localReference`).
 */
export function rowWaitedFor(
  record: RowRef, operation: 'create' | 'update' | 'delete', references: readonly (RowRef | undefined)[],
): RowRef | undefined {
  if (operation === 'delete') return undefined;
  if (operation === 'update' && record.recordId < 0) return record;
  for (const reference of references) if (reference !== undefined) return reference;
  return undefined;
}

/** Whether a local edit of this field can point at a row inserted here: a writable reference to a known table. */
export function isLocalReferenceField(field: MirrorField): boolean {
  return field.fieldType === 'reference' && !field.readOnly && field.refTableId !== null;
}

/** The row inserted here that `value` of `field` points at, if any: a negative id in a local reference field. */
export function localReference(field: MirrorField, value: unknown): RowRef | undefined {
  if (!isLocalReferenceField(field) || typeof value !== 'number' || !Number.isInteger(value) || value >= 0) return undefined;
  return { tableId: field.refTableId!, recordId: value };
}
