import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { MultipartFile } from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import { CSV_FILE_LIMIT_BYTES, CSV_IMPORT_PARTS } from '../../api/index.ts';
import { ApiError, BadRequestError, PayloadTooLargeError } from '../errors.ts';

/**
 * Receives the multipart form of a CSV import: the `file` part is streamed to a private
 * temporary file (never held in memory) and stops at the 50 MiB limit; the other parts are
 * short text. The import reads the file from disk afterwards, inside its transaction.
 */

/** Largest option part (`mappings` of a wide file is the long one). */
export const CSV_OPTION_PART_LIMIT_BYTES = 1024 * 1024;
/**
 * The options of @fastify/multipart for the import route: one file, each option once; a file over
 * the limit is cut short (`truncated`), and receiveCsvForm answers 413.
 */
export const CSV_FORM_OPTIONS = {
  limits: {
    fileSize: CSV_FILE_LIMIT_BYTES,
    files: 1,
    fields: CSV_IMPORT_PARTS.length - 1,
    parts: CSV_IMPORT_PARTS.length,
    fieldSize: CSV_OPTION_PART_LIMIT_BYTES,
    headerPairs: 100,
  },
  throwFileSizeLimit: false,
};
/**
 * A request whose declared length exceeds this cannot hold a file within the limit, whatever its
 * other parts: it is refused before anything is read. Allows for every option part at its
 * longest plus the part headers and boundaries.
 */
export const CSV_REQUEST_LIMIT_BYTES = CSV_FILE_LIMIT_BYTES + CSV_FORM_OPTIONS.limits.fields * CSV_OPTION_PART_LIMIT_BYTES + 64 * 1024;

const OPTION_PARTS = new Set<string>(CSV_IMPORT_PARTS.filter((p) => p !== 'file'));

export interface ReceivedForm {
  /** The option parts as sent, by name. */
  readonly parts: Record<string, string>;
  /** The uploaded file on disk. */
  readonly filePath: string;
  readonly fileBytes: number;
  /** Deletes the temporary file. */
  discard(): Promise<void>;
}

export function fileTooLarge(): PayloadTooLargeError {
  return new PayloadTooLargeError(`file too large: a CSV import takes at most ${CSV_FILE_LIMIT_BYTES} bytes (50 MiB)`);
}

function partList(): string {
  return CSV_IMPORT_PARTS.join(', ');
}

/** The errors of @fastify/multipart and busboy as the API's 400 and 413. */
function formError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  const code = (error as { code?: unknown }).code;
  const message = error instanceof Error ? error.message : String(error);
  switch (code) {
    case 'FST_REQ_FILE_TOO_LARGE':
      return fileTooLarge();
    case 'FST_FILES_LIMIT':
      return new BadRequestError('form: only one file part is accepted, named file');
    case 'FST_PARTS_LIMIT':
    case 'FST_FIELDS_LIMIT':
      return new BadRequestError(`form: too many parts; the parts are ${partList()}, each at most once`);
    default:
      return new BadRequestError(`form: malformed multipart/form-data body: ${message}`);
  }
}

/**
 * Writes a file part to disk and returns its size. At the limit busboy would skip the rest of the
 * part, reading it all; destroying the part stops that at once instead, and the route answers 413
 * and closes the connection.
 */
function spool(file: MultipartFile['file'], path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    let bytes = 0;
    file.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
    });
    file.once('limit', () => {
      reject(fileTooLarge());
      file.destroy();
    });
    pipeline(file, createWriteStream(path, { mode: 0o600 })).then(() => resolve(bytes), reject);
  });
}

export async function receiveCsvForm(request: FastifyRequest): Promise<ReceivedForm> {
  const dir = await mkdtemp(join(tmpdir(), 'wsmirror-csv-'));
  const filePath = join(dir, 'upload.csv');
  const discard = () => rm(dir, { recursive: true, force: true });
  const parts: Record<string, string> = {};
  let fileBytes: number | undefined;
  try {
    for await (const part of request.parts()) {
      const name = part.fieldname;
      if (part.type === 'file') {
        if (name !== 'file') throw new BadRequestError(`form: unknown file part ${JSON.stringify(name)}; the CSV file goes in the part named file`);
        fileBytes = await spool(part.file, filePath);
        continue;
      }
      if (name === 'file') {
        throw new BadRequestError('form.file: send the CSV as a file part (with a filename), such as curl -F file=@data.csv');
      }
      if (!OPTION_PARTS.has(name)) throw new BadRequestError(`form: unknown part ${JSON.stringify(name)}; the parts are ${partList()}`);
      if (Object.hasOwn(parts, name)) throw new BadRequestError(`form.${name}: sent more than once`);
      if (part.valueTruncated) throw new BadRequestError(`form.${name}: longer than ${CSV_OPTION_PART_LIMIT_BYTES} bytes`);
      parts[name] = String(part.value);
    }
  } catch (error) {
    await discard();
    throw formError(error);
  }
  if (fileBytes === undefined) {
    await discard();
    throw new BadRequestError('form.file: missing: send the CSV file in a part named file');
  }
  return { parts, filePath, fileBytes, discard };
}
