import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { basename } from 'node:path';
import { Readable } from 'node:stream';

/**
 * A multipart/form-data body of text parts and one file, streamed from disk: the file is never
 * read into memory, its length is known in advance (so the request declares Content-Length and
 * the server can refuse an oversized one before it arrives), and every attempt of a request
 * opens the file afresh.
 */

/** A request body that can be produced again for each attempt. */
export interface UploadBody {
  readonly contentType: string;
  readonly length: number;
  /** A fresh stream of the whole body. */
  open(): Readable;
}

export interface MultipartFile {
  /** The form part's name. */
  part: string;
  path: string;
  size: number;
  contentType: string;
}

/** Names and file names go in quoted header parameters: quotes and line breaks are escaped. */
function quoted(value: string): string {
  return `"${value.replace(/[\r\n"]/g, (c) => encodeURIComponent(c))}"`;
}

export function multipartUpload(
  fields: readonly (readonly [string, string])[],
  file: MultipartFile,
  onFileBytes?: (bytes: number) => void,
): UploadBody {
  const boundary = `----wsmirror-${randomBytes(12).toString('hex')}`;
  const head = Buffer.from(
    fields.map(([name, value]) => `--${boundary}\r\ncontent-disposition: form-data; name=${quoted(name)}\r\n\r\n${value}\r\n`).join('') +
      `--${boundary}\r\ncontent-disposition: form-data; name=${quoted(file.part)}; filename=${quoted(basename(file.path))}\r\n` +
      `content-type: ${file.contentType}\r\n\r\n`,
    'utf8',
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`, 'utf8');
  return {
    contentType: `multipart/form-data; boundary=${boundary}`,
    length: head.length + file.size + tail.length,
    open() {
      return Readable.from((async function* () {
        yield head;
        let sent = 0;
        for await (const chunk of createReadStream(file.path, { highWaterMark: 256 * 1024 }) as AsyncIterable<Buffer>) {
          sent += chunk.length;
          if (sent > file.size) throw new Error(`${file.path} grew while it was being sent`);
          yield chunk;
          onFileBytes?.(sent);
        }
        if (sent !== file.size) throw new Error(`${file.path} changed size while it was being sent (${file.size} bytes expected, ${sent} read)`);
        yield tail;
      })(), { objectMode: false });
    },
  };
}
