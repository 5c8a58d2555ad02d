import type { RowSink, SqlValue } from '../dialect.ts';
import { RowSlots } from '../row-slots.ts';

const NEEDS_ESCAPE = /[\\\n\r\t]/;

/** One value in COPY text format: `\N` for NULL, backslash escapes for the separators. */
function copyTextValue(value: SqlValue): string {
  if (value === null) return '\\N';
  if (typeof value === 'boolean') return value ? 't' : 'f';
  if (typeof value === 'number') return String(value);
  if (!NEEDS_ESCAPE.test(value)) return value;
  return value.replace(/[\\\n\r\t]/g, (c) => (c === '\\' ? '\\\\' : c === '\n' ? '\\n' : c === '\r' ? '\\r' : '\\t'));
}

/** Characters of COPY text gathered before they are stored as bytes. */
const CHUNK_CHARS = 65_536;

/**
 * Rows as COPY text, each value written out as it is encoded (Postgres' `RowSink`). The text is
 * stored as UTF-8 bytes every 64 KiB: a batch waiting for its write then holds no JavaScript
 * strings, so the records it came from are garbage at once and the collector has little to copy.
 *
 * Every line starts with the row's number in the sink (the stage's ROW_NUMBER_COLUMN): a
 * repeated id cannot be taken out of bytes already written, so the write keeps the last line of
 * each id instead (`repeatedIds`).
 */
export class CopyTextRows implements RowSink {
  readonly #slots = new RowSlots();
  readonly #chunks: Buffer[] = [];
  #text = '';
  #lines = 0;
  #repeated = false;

  get ids(): readonly number[] {
    return this.#slots.ids;
  }

  /** True when an id came more than once: the write must keep only its last line. */
  get repeatedIds(): boolean {
    return this.#repeated;
  }

  beginRow(id: number): void {
    const known = this.#slots.ids.length;
    if (this.#slots.slot(id) < known) this.#repeated = true;
    this.#text += String(this.#lines++);
  }

  value(value: SqlValue): void {
    this.#text += `\t${copyTextValue(value)}`;
  }

  endRow(): void {
    this.#text += '\n';
    if (this.#text.length >= CHUNK_CHARS) {
      this.#chunks.push(Buffer.from(this.#text));
      this.#text = '';
    }
  }

  /** The rows as COPY text, in chunks of about 64 KiB. */
  *chunks(): Generator<Buffer> {
    yield* this.#chunks;
    if (this.#text !== '') yield Buffer.from(this.#text);
  }
}

/** The stage column holding each line's row number. */
export const ROW_NUMBER_COLUMN = '_wsmirror_row';
