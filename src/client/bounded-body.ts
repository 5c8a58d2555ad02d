import type { Readable } from 'node:stream';

/** The response body is larger than the configured bound. */
export class BodyTooLargeError extends Error {
  readonly limit: number;
  constructor(limit: number, seen: string) {
    super(`response body exceeds the ${limit}-byte limit (${seen})`);
    this.limit = limit;
  }
}

/**
 * Reads a whole body, failing as soon as it passes `limit` bytes: a huge or endless response
 * never sits in memory. A declared Content-Length over the limit fails before reading.
 *
 * A body of declared length is copied into one buffer of that size as it arrives, so it is held
 * once: gathering its chunks and joining them at the end held it twice at the end of every
 * response (a 20 MB page of records, 40 MB).
 */
export async function readBoundedBody(body: Readable, limit: number, contentLength?: string | string[]): Promise<Buffer> {
  const declared = Number(Array.isArray(contentLength) ? contentLength[0] : contentLength);
  if (contentLength !== undefined && Number.isFinite(declared) && declared > limit) {
    discard(body);
    throw new BodyTooLargeError(limit, `Content-Length ${declared}`);
  }
  let whole = contentLength !== undefined && Number.isSafeInteger(declared) && declared > 0 ? Buffer.allocUnsafe(declared) : undefined;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    if (size + chunk.length > limit) {
      discard(body);
      throw new BodyTooLargeError(limit, `more than ${limit} bytes received`);
    }
    if (whole !== undefined && size + chunk.length > whole.length) {
      // More than declared: gathered as chunks from here on.
      chunks.push(whole.subarray(0, size));
      whole = undefined;
    }
    if (whole !== undefined) chunk.copy(whole, size);
    else chunks.push(chunk);
    size += chunk.length;
  }
  if (whole !== undefined) return size === whole.length ? whole : whole.subarray(0, size);
  return Buffer.concat(chunks, size);
}

/** Reads at most `limit` bytes of a body (error bodies only need their start), then drops the rest. */
export async function readBodyPrefix(body: Readable, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    chunks.push(chunk);
    size += chunk.length;
    if (size >= limit) {
      discard(body);
      break;
    }
  }
  return Buffer.concat(chunks, size).subarray(0, limit);
}

/** Drops a body; the abort error undici then emits has nowhere to go but this listener. */
function discard(body: Readable): void {
  body.on('error', () => undefined);
  body.destroy();
}
