import { isReadOnlyType, type CsvMapping, type CsvUpdatePolicy } from '../../api/index.ts';
import { BadRequestError } from '../errors.ts';
import type { FieldRow, TableRow } from '../store/schema-rows.ts';

/**
 * Which CSV column feeds which field. With a header row, columns are named by their header cell;
 * without one, by their position (`1`, `2`, …). Without `mappings`, every column maps to the field
 * of its name, ignoring case (header), or to the writable field at its position (no header).
 * With `mappings`, only the mapped columns are read.
 */

export interface ColumnBinding {
  /** 0-based position of the column in a record. */
  readonly index: number;
  /** How error messages name the column: `column 3 (price)`. */
  readonly label: string;
  readonly field: FieldRow;
  readonly policy: CsvUpdatePolicy;
}

function fold(name: string): string {
  return name.trim().toLowerCase();
}

function listOf(names: readonly string[]): string {
  const shown = names.slice(0, 20).map((n) => JSON.stringify(n));
  if (names.length > 20) shown.push('…');
  return shown.length === 0 ? '(none)' : shown.join(', ');
}

function columnLabel(index: number, header: readonly string[] | undefined): string {
  return header === undefined ? `column ${index + 1}` : `column ${index + 1} (${JSON.stringify(header[index])})`;
}

function writableField(field: FieldRow, table: TableRow, where: string): FieldRow {
  if (isReadOnlyType(field.type)) {
    throw new BadRequestError(`${where}: field ${field.name} of table ${table.moduleName}.${table.name} is of type ${field.type}, which is computed and cannot be imported`);
  }
  return field;
}

/**
 * A header row without its trailing empty cells: a trailing delimiter, as spreadsheets write
 * them, names no column (data rows may end so too). A header of empty cells only stays whole,
 * to be refused for naming no field.
 */
export function headerCells(cells: readonly string[]): readonly string[] {
  let end = cells.length;
  while (end > 1 && cells[end - 1]!.trim() === '') end--;
  return end === 1 && cells[0]!.trim() === '' ? cells : cells.slice(0, end);
}

/** The column a name refers to: a header cell (ignoring case and surrounding spaces), or a position. */
function findColumn(name: string, header: readonly string[] | undefined, width: number, where: string): number {
  if (header === undefined) {
    const position = /^[1-9][0-9]*$/.test(name.trim()) ? Number(name.trim()) : NaN;
    if (!(position <= width)) {
      throw new BadRequestError(`${where}: without a header row columns are named by position, 1 to ${width}; got ${JSON.stringify(name)}`);
    }
    return position - 1;
  }
  const matches = header.flatMap((cell, i) => (fold(cell) === fold(name) ? [i] : []));
  if (matches.length === 0) throw new BadRequestError(`${where}: the header has no column ${JSON.stringify(name)}; columns: ${listOf(header)}`);
  if (matches.length > 1) {
    throw new BadRequestError(`${where}: ${matches.map((i) => `columns ${i + 1}`).join(' and ')} are both named ${JSON.stringify(name)}`);
  }
  return matches[0]!;
}

/**
 * The bindings of an import. `header` is the header row, or undefined without one (then `width`,
 * the cell count of the first record, bounds the positions). Problems are 400s naming the column,
 * mapping or field.
 */
export function bindColumns(
  table: TableRow,
  fields: readonly FieldRow[],
  header: readonly string[] | undefined,
  width: number,
  mappings: readonly CsvMapping[] | undefined,
): ColumnBinding[] {
  const byName = new Map(fields.map((f) => [f.name, f]));
  if (mappings !== undefined) {
    const seen = new Map<number, number>();
    return mappings.map((m, i) => {
      const where = `form.mappings[${i}]`;
      const field = byName.get(m.fieldName);
      if (!field) {
        throw new BadRequestError(`${where}.fieldName: table ${table.moduleName}.${table.name} has no field ${m.fieldName}; fields: ${listOf(fields.map((f) => f.name))}`);
      }
      const index = findColumn(m.csvColumnName, header, width, `${where}.csvColumnName`);
      const first = seen.get(index);
      if (first !== undefined) throw new BadRequestError(`${where}.csvColumnName: ${columnLabel(index, header)} is mapped twice (also mappings[${first}])`);
      seen.set(index, i);
      return { index, label: columnLabel(index, header), field: writableField(field, table, where), policy: m.updatePolicy ?? 'overwrite' };
    });
  }
  if (header === undefined) {
    const writable = fields.filter((f) => !isReadOnlyType(f.type));
    if (width > writable.length) {
      throw new BadRequestError(
        `the file has ${width} columns but table ${table.moduleName}.${table.name} has ${writable.length} writable fields (${listOf(writable.map((f) => f.name))}): send mappings to choose the columns`,
      );
    }
    return Array.from({ length: width }, (_, index) => ({ index, label: columnLabel(index, header), field: writable[index]!, policy: 'overwrite' as const }));
  }
  const byFolded = new Map(fields.map((f) => [fold(f.name), f]));
  const bindings: ColumnBinding[] = [];
  const unknown: string[] = [];
  const boundAt = new Map<string, number>();
  header.forEach((cell, index) => {
    const field = byFolded.get(fold(cell));
    if (!field) {
      unknown.push(cell);
      return;
    }
    const first = boundAt.get(field.name);
    if (first !== undefined) {
      throw new BadRequestError(`header: ${columnLabel(first, header)} and ${columnLabel(index, header)} both map to field ${field.name}`);
    }
    boundAt.set(field.name, index);
    bindings.push({ index, label: columnLabel(index, header), field: writableField(field, table, `header: ${columnLabel(index, header)}`), policy: 'overwrite' });
  });
  if (unknown.length > 0) {
    throw new BadRequestError(
      `header: ${unknown.length === 1 ? 'column' : 'columns'} ${listOf(unknown)} ${unknown.length === 1 ? 'matches' : 'match'} no field of table ${table.moduleName}.${table.name} (fields: ${listOf(fields.map((f) => f.name))}); send mappings to choose the columns`,
    );
  }
  return bindings;
}
