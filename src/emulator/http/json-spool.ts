import { closeSync, createReadStream, mkdtempSync, openSync, rmdirSync, unlinkSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';

/**
 * A JSON response body written piece by piece in one synchronous step (so it shows the store at
 * one moment) and sent afterwards. A records page may hold 100 records of 6 MB each: more text
 * than one JavaScript string can hold, and more than the emulator should keep in memory. So the
 * body stays in memory while it is small, and past SPILL_BYTES goes to a temporary file that has
 * no name (it is removed as soon as it is opened: nothing is left behind, whatever happens to the
 * process), from which it is streamed.
 */

const SPILL_BYTES = 16 * 1024 * 1024;
/** Once spilled, pieces are written to the file in runs of about this size. */
const WRITE_BYTES = 1024 * 1024;

export class JsonSpool {
  #pending: string[] = [];
  #pendingBytes = 0;
  #bytes = 0;
  /** The descriptor of the temporary file, once the body has spilled. */
  #file: number | undefined;

  write(text: string): void {
    const bytes = Buffer.byteLength(text);
    this.#pending.push(text);
    this.#pendingBytes += bytes;
    this.#bytes += bytes;
    if (this.#file === undefined ? this.#bytes > SPILL_BYTES : this.#pendingBytes >= WRITE_BYTES) this.#flush();
  }

  /** Sets the headers and gives the body to answer with; the spool is spent afterwards. */
  send(reply: FastifyReply): string | Readable {
    reply.type('application/json; charset=utf-8');
    reply.header('content-length', this.#bytes);
    if (this.#file === undefined) return this.#pending.join('');
    this.#flush();
    const fd = this.#file;
    this.#file = undefined;
    // The stream closes the file when it ends or is destroyed (a client that goes away).
    return createReadStream('', { fd, start: 0 });
  }

  /** Drops what was written (the answer is an error instead). */
  discard(): void {
    if (this.#file !== undefined) closeSync(this.#file);
    this.#file = undefined;
    this.#pending = [];
  }

  #flush(): void {
    this.#file ??= openUnnamedFile();
    const buffer = Buffer.from(this.#pending.join(''));
    for (let done = 0; done < buffer.length;) done += writeSync(this.#file, buffer, done);
    this.#pending = [];
    this.#pendingBytes = 0;
  }
}

function openUnnamedFile(): number {
  const dir = mkdtempSync(join(tmpdir(), 'wsmirror-page-'));
  const path = join(dir, 'body.json');
  const fd = openSync(path, 'w+', 0o600);
  unlinkSync(path);
  rmdirSync(dir);
  return fd;
}
