import type { MirrorField, MirrorTable } from './catalog.ts';
import { fieldsOf } from './catalog.ts';
import { ID_COLUMN, NameAllocator, SYNCED_AT_COLUMN, SYSTEM_COLUMN_COMMENTS } from './naming.ts';
import type { NamingRules } from './naming.ts';
import { valueKindOf } from './value-kind.ts';

/**
 * SQL types of the readable views' own columns: lists (option labels, record ids), the bounds
 * of an appointment, and its range (null: the dialect has no range type, the view shows none).
 */
export interface ViewTypes {
  readonly list: string;
  readonly bound: string;
  readonly range: string | null;
}

/** What a view needs to know of its dialect (a `Dialect` is one). */
interface ViewDialect {
  readonly naming: NamingRules;
  readonly viewTypes: ViewTypes;
}

/**
 * The readable view of a mirrored table (docs/mirror.md, "Readable views"), as data: which
 * columns it has and where each comes from. Each dialect turns it into SQL
 * (`Dialect.createViewSql`); `wsmirror schema` documents it. Pure.
 *
 * A view shows every column of its table under the same name, and next to some of them a
 * readable companion: the option label of a choice, the labels of a multi, the ids of a dmulti
 * as a list, the display value of a referenced record, the bounds of an appointment. Option
 * labels are read from `_wsmirror_choice_options` when the view is queried, so a relabelled
 * option shows at once.
 */
export type ViewColumn =
  /** A column of the table, as it is. */
  | { kind: 'column'; name: string; field: MirrorField | null }
  /** Label of the option a choice column holds (the option id when the option is unknown). */
  | { kind: 'optionLabel'; name: string; field: MirrorField }
  /** Labels of the options a multi column holds, in order. */
  | { kind: 'optionLabels'; name: string; field: MirrorField }
  /** The record ids a dmulti column holds, in order. */
  | { kind: 'idList'; name: string; field: MirrorField }
  /** Display value of the referenced record; `target` is null when its table is not mirrored. */
  | { kind: 'referenceLabel'; name: string; field: MirrorField; target: ReferenceTarget | null }
  /** Start or end of an appointment. */
  | { kind: 'rangeStart' | 'rangeEnd'; name: string; field: MirrorField }
  /** An appointment as a range, where the dialect has range types (`Dialect.viewTypes`). */
  | { kind: 'range'; name: string; field: MirrorField };

export interface ReferenceTarget {
  table: MirrorTable;
  /** The column shown for a record: see `displayFieldOf`; null shows the id. */
  display: MirrorField | null;
}

export interface ReadableView {
  table: MirrorTable;
  viewName: string;
  columns: ViewColumn[];
}

/** Suffix of each companion column's name, after the column it explains. */
const COMPANION_SUFFIX = {
  optionLabel: '_label',
  optionLabels: '_labels',
  idList: '_ids',
  referenceLabel: '_label',
  rangeStart: '_start',
  rangeEnd: '_end',
  range: '_range',
} as const satisfies Record<Exclude<ViewColumn['kind'], 'column'>, string>;

type CompanionKind = keyof typeof COMPANION_SUFFIX;

/** The companions of a field's column, by its type. */
function companionsOf(fieldType: string, dialect: ViewDialect): CompanionKind[] {
  switch (fieldType) {
    case 'choice': return ['optionLabel'];
    case 'multi': return ['optionLabels'];
    case 'dmulti': return ['idList'];
    case 'reference': return ['referenceLabel'];
    case 'appointment': return dialect.viewTypes.range === null ? ['rangeStart', 'rangeEnd'] : ['rangeStart', 'rangeEnd', 'range'];
    default: return [];
  }
}

/** How many columns the readable view of a table with fields of these types shows. */
export function viewColumnCount(fieldTypes: readonly string[], dialect: ViewDialect): number {
  return fieldTypes.reduce((n, type) => n + 1 + companionsOf(type, dialect).length, 2);
}

/**
 * The field that names a record of a table in a readable view: upstream tables mark no primary
 * field, so it is the first `string` field, else the first field whose values are not JSON, else
 * none (the view then shows the id).
 */
export function displayFieldOf(fields: readonly MirrorField[]): MirrorField | null {
  return fields.find((f) => f.fieldType === 'string')
    ?? fields.find((f) => valueKindOf(f.fieldType) !== 'json')
    ?? null;
}

/**
 * The view of `table`. `tables` holds every mirrored table with its fields (for references).
 * Companion names are `<column>_label` and so on; one that would take a name already used in
 * the view gets the stable hash suffix of naming.ts.
 */
export function readableViewOf(
  table: MirrorTable, allFields: readonly MirrorField[], tables: ReadonlyMap<string, MirrorTable>, dialect: ViewDialect,
): ReadableView {
  const fields = fieldsOf({ fields: allFields as MirrorField[] }, table.tableId);
  const names = new NameAllocator(dialect.naming.maxLength, [ID_COLUMN, SYNCED_AT_COLUMN, ...fields.map((f) => f.columnName)]);
  const columns: ViewColumn[] = [
    { kind: 'column', name: ID_COLUMN, field: null },
    { kind: 'column', name: SYNCED_AT_COLUMN, field: null },
  ];
  for (const field of fields) {
    columns.push({ kind: 'column', name: field.columnName, field });
    for (const kind of companionsOf(field.fieldType, dialect)) {
      const name = names.allocate(`${field.columnName}${COMPANION_SUFFIX[kind]}`, `${field.fieldId}#${kind}`);
      if (kind === 'referenceLabel') {
        const target = field.refTableId === null ? undefined : tables.get(field.refTableId);
        columns.push({
          kind, name, field,
          target: target ? { table: target, display: displayFieldOf(fieldsOf({ fields: allFields as MirrorField[] }, target.tableId)) } : null,
        });
      } else {
        columns.push({ kind, name, field });
      }
    }
  }
  return { table, viewName: table.viewName ?? '', columns };
}

/** What a view column holds, in words (Postgres column comments, `wsmirror schema`). */
export function describeViewColumn(column: ViewColumn): string | null {
  if (column.kind === 'column') return column.field === null ? SYSTEM_COLUMN_COMMENTS[column.name] ?? null : column.field.label;
  const label = column.field.label ?? column.field.fieldName;
  switch (column.kind) {
    case 'optionLabel': return `${label} (option label)`;
    case 'optionLabels': return `${label} (option labels)`;
    case 'idList': return `${label} (record ids)`;
    case 'referenceLabel':
      return column.target === null
        ? `${label} (referenced table not mirrored)`
        : `${label} (${column.target.display?.columnName ?? 'id'} of ${column.target.table.sqlName})`;
    case 'rangeStart': return `${label} (start)`;
    case 'rangeEnd': return `${label} (end)`;
    case 'range': return `${label} (range)`;
  }
}
