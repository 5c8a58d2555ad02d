import { printable } from './printable.ts';
/** A column of a plain-text table: its title, its cell for a row, and whether it aligns right (numbers). */
export interface TextColumn<T> {
  readonly title: string;
  readonly right?: boolean;
  readonly value: (row: T) => string;
}

/**
 * The lines of an aligned plain-text table: the titles, then a line per row, columns two spaces
 * apart, each line after `indent` and without trailing spaces.
 */
export function textTable<T>(columns: readonly TextColumn<T>[], rows: readonly T[], indent = ''): string[] {
  const cells = [columns.map((c) => c.title), ...rows.map((row) => columns.map((c) => oneLine(c.value(row))))];
  const widths = columns.map((_, i) => Math.max(...cells.map((line) => line[i]!.length)));
  return cells.map((line) => indent + line.map((cell, i) => (columns[i]!.right ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!))).join('  ').trimEnd());
}

/** A cell on one line: control characters (a value's line breaks, an error's tabs) escaped as in JSON. */
function oneLine(text: string): string {
  return printable(text);
}
