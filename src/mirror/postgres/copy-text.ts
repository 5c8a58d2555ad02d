import type { SqlValue } from '../dialect.ts';

/** One value in COPY text format: `\N` for NULL, backslash escapes for the separators. */
export function copyTextValue(value: SqlValue): string {
  if (value === null) return '\\N';
  if (typeof value === 'boolean') return value ? 't' : 'f';
  if (typeof value === 'number') return String(value);
  return value.replace(/[\\\n\r\t]/g, (c) => (c === '\\' ? '\\\\' : c === '\n' ? '\\n' : c === '\r' ? '\\r' : '\\t'));
}

/** Rows as COPY text, in chunks of about 64 KiB. */
export function* copyTextRows(rows: readonly SqlValue[][]): Generator<string> {
  let chunk = '';
  for (const row of rows) {
    chunk += `${row.map(copyTextValue).join('\t')}\n`;
    if (chunk.length >= 65_536) {
      yield chunk;
      chunk = '';
    }
  }
  if (chunk !== '') yield chunk;
}
