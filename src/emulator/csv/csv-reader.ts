import { closeSync, openSync, readSync } from 'node:fs';
import { Parser } from 'csv-parse';
import type { CsvEncoding, CsvNumberFormat } from '../../api/index.ts';
import { BadRequestError } from '../errors.ts';
import { detectDelimiter } from './delimiter-detection.ts';

/**
 * Reads a CSV file synchronously, one chunk at a time, and hands out its records with the line
 * each starts on. Synchronous because the import runs inside one SQLite transaction, which cannot
 * wait for I/O; chunked so that only a chunk and one batch of records are ever in memory.
 *
 * Bytes are decoded strictly (a byte sequence that is not text in the encoding is a 400, never a
 * silent replacement character), a byte-order mark is dropped, and the text goes to csv-parse as
 * UTF-8. csv-parse does RFC 4180: quoted delimiters and line breaks, doubled quotes, CRLF or LF.
 */

export interface CsvFormat {
  /** Absent: UTF-8, or UTF-16LE when the file starts with its byte-order mark. */
  encoding: CsvEncoding | undefined;
  /** Absent: detected from the first lines (delimiter-detection.ts). */
  delimiter: string | undefined;
  quoteChar: string;
  numberFormat: CsvNumberFormat;
}

export interface CsvRecord {
  /** 1-based line of the file on which the record starts. */
  line: number;
  cells: string[];
}

const CHUNK_BYTES = 64 * 1024;
/** Text gathered before the delimiter is detected: a few dozen lines of a usual file. */
const SAMPLE_CHARS = 16 * 1024;
/** Longest record, in characters: guards against an unclosed quote swallowing the file. */
const MAX_RECORD_CHARS = 8 * 1024 * 1024;

const DECODER_LABELS: Record<CsvEncoding, string> = { utf8: 'utf-8', utf16le: 'utf-16le', latin1: 'latin1' };
const ENCODING_NAMES: Record<CsvEncoding, string> = { utf8: 'UTF-8', utf16le: 'UTF-16LE', latin1: 'Latin-1' };

/**
 * csv-parse's parsing core. Its Parser stream and its sync API are both built on this object (the
 * Parser keeps it as `api`); calling it directly parses each chunk at once and reports every
 * record as it completes.
 */
interface ParserCore {
  parse(chunk: Buffer | undefined, end: boolean, push: (record: string[]) => void, close: () => void): Error | undefined;
}

export class CsvFileReader {
  readonly #path: string;
  readonly #format: CsvFormat;
  #delimiter: string | undefined;
  #encoding: CsvEncoding | undefined;

  constructor(path: string, format: CsvFormat) {
    this.#path = path;
    this.#format = format;
    this.#delimiter = format.delimiter;
    this.#encoding = format.encoding;
  }

  /** The delimiter used (detected once reading has started). */
  get delimiter(): string | undefined {
    return this.#delimiter;
  }

  get encoding(): CsvEncoding | undefined {
    return this.#encoding;
  }

  /** The records of the file, in order. A malformed file throws a 400 naming the line. */
  *records(): Generator<CsvRecord, void, undefined> {
    const fd = openSync(this.#path, 'r');
    try {
      yield* this.#read(fd);
    } finally {
      closeSync(fd);
    }
  }

  *#read(fd: number): Generator<CsvRecord, void, undefined> {
    const buffer = Buffer.allocUnsafe(CHUNK_BYTES);
    let offset = 0;
    let decoder: TextDecoder | undefined;
    let parse: ((text: string | undefined, end: boolean) => void) | undefined;
    let sample = '';
    let pending: CsvRecord[] = [];
    let nextLine = 1;

    const start = (sampleText: string, complete: boolean) => {
      this.#delimiter ??= detectDelimiter(sampleText, this.#format.quoteChar, this.#format.numberFormat, complete);
      const parser = new Parser({
        delimiter: this.#delimiter,
        quote: this.#format.quoteChar,
        escape: this.#format.quoteChar,
        // Any line ending, even mixed in one file (files glued together from two systems).
        record_delimiter: ['\r\n', '\n', '\r'],
        relax_column_count: true,
        relax_quotes: true,
        max_record_size: MAX_RECORD_CHARS,
      });
      const core = (parser as unknown as { api: ParserCore }).api;
      // Every line gives a record (blank ones too), so a record starts one line after the line
      // breaks inside the previous one's quoted cells.
      const push = (cells: string[]) => {
        pending.push({ line: nextLine, cells });
        nextLine += 1 + lineBreaksIn(cells);
      };
      return (text: string | undefined, end: boolean) => {
        const error = core.parse(text === undefined ? undefined : Buffer.from(text, 'utf8'), end, push, () => undefined);
        if (error) throw new BadRequestError(`invalid CSV: the record starting on line ${nextLine}: ${describeCsvError(error)}`);
      };
    };

    for (;;) {
      const read = readSync(fd, buffer, 0, CHUNK_BYTES, null);
      const end = read === 0;
      if (!decoder) {
        if (this.#encoding === undefined) this.#encoding = buffer[0] === 0xff && buffer[1] === 0xfe && read >= 2 ? 'utf16le' : 'utf8';
        decoder = new TextDecoder(DECODER_LABELS[this.#encoding], { fatal: true });
      }
      let text: string;
      try {
        text = end ? decoder.decode() : decoder.decode(buffer.subarray(0, read), { stream: true });
      } catch {
        throw new BadRequestError(this.#notText(offset, read));
      }
      offset += read;
      if (!parse) {
        sample += text;
        if (!end && sample.length < SAMPLE_CHARS) continue;
        parse = start(sample, end);
        text = sample;
        sample = '';
      }
      if (text !== '') parse(text, false);
      if (end) parse(undefined, true);
      yield* pending;
      pending = [];
      if (end) return;
    }
  }

  #notText(offset: number, length: number): string {
    const name = ENCODING_NAMES[this.#encoding ?? 'utf8'];
    const hint = this.#encoding === 'utf8'
      ? ': send the encoding part (utf16le or latin1) when the file is in another encoding'
      : '';
    return `file is not valid ${name} text (bytes ${offset} to ${offset + length - 1})${hint}`;
  }
}

function lineBreaksIn(cells: readonly string[]): number {
  let breaks = 0;
  for (const cell of cells) {
    if (cell.indexOf('\n') < 0 && cell.indexOf('\r') < 0) continue;
    breaks += cell.match(/\r\n|\r|\n/g)!.length;
  }
  return breaks;
}

/** csv-parse's messages, which already say where (`at line 3`), without the option hints. */
function describeCsvError(error: Error): string {
  const code = (error as { code?: string }).code;
  const message = error.message.replace(/, got [^,]*$/, '');
  if (code === 'CSV_MAX_RECORD_SIZE') return `${message} (a record may hold at most ${MAX_RECORD_CHARS} characters: is a quote left open?)`;
  return message;
}
