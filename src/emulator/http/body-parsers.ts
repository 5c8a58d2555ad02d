import type { FastifyInstance, FastifyRequest } from 'fastify';
import { BadRequestError } from '../errors.ts';

/**
 * How request bodies are read (every route but the CSV import, which has its own parser): JSON
 * and nothing else. An empty body is no body, whatever its content type: many HTTP clients send
 * `Content-Type: application/json` on every request, a DELETE with nothing to send included, and
 * a route that takes no body must answer it as it answers a request without one. A route that
 * wants a body then says it is missing (`requireBody`). Bodies are read whole (within the body
 * limit) before they are judged, so the answer never races a client still sending.
 */
export function registerBodyParsers(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body: Buffer, done) => {
    try {
      done(null, parseJsonBody(request, body));
    } catch (error) {
      done(error as Error, undefined);
    }
  });
  // Any other content type, or none with a body: fine when empty, refused otherwise.
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (request, body: Buffer, done) => {
    if (body.length === 0) return done(null, undefined);
    done(new BadRequestError(`unsupported content type ${JSON.stringify(request.headers['content-type'] ?? '')}: send application/json`), undefined);
  });
}

// Fatal: bytes that are not UTF-8 are refused, never read as U+FFFD. No `stream`, so one decoder
// serves every request. It drops a byte-order mark (RFC 8259 lets a reader ignore one).
const UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * A JSON body: UTF-8 text (RFC 8259), so a charset other than UTF-8 is refused whatever the bytes
 * (read as declared, they would be other text), and bytes that are not UTF-8 are refused naming
 * the first one, as the CSV import refuses a file in the wrong encoding.
 */
function parseJsonBody(request: FastifyRequest, body: Buffer): unknown {
  if (body.length === 0) return undefined;
  refuseContentCoding(request);
  const charset = charsetOf(request.headers['content-type']);
  if (charset !== undefined && !/^utf-?8$/i.test(charset)) {
    throw new BadRequestError(`unsupported charset ${JSON.stringify(charset)}: JSON bodies are UTF-8 text; send charset=utf-8 or none`);
  }
  let text: string;
  try {
    text = UTF8.decode(body);
  } catch {
    throw new BadRequestError(`body is not valid UTF-8 (byte ${firstInvalidByte(body)}): JSON bodies are UTF-8 text`);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new BadRequestError(`body is not valid JSON: ${(error as Error).message}`);
  }
}

/**
 * Bodies are read as sent: Node does not undo a content coding, and read as JSON or as a form a
 * compressed body would be refused as malformed, or taken for what it is not. So any coding
 * other than `identity` is refused by name.
 */
export function refuseContentCoding(request: FastifyRequest): void {
  const coding = request.headers['content-encoding'];
  if (coding !== undefined && coding.trim().toLowerCase() !== 'identity') {
    throw new BadRequestError(`unsupported content-encoding ${JSON.stringify(coding)}: send the body uncompressed`);
  }
}

/** The `charset` parameter of a content type, unquoted. */
function charsetOf(contentType: string | undefined): string | undefined {
  const m = /;\s*charset\s*=\s*(?:"([^"]*)"|([^;\s]*))/i.exec(contentType ?? '');
  return m === null ? undefined : (m[1] ?? m[2]);
}

/**
 * Where the first byte sequence that is not UTF-8 starts. A lenient decoder puts U+FFFD in its
 * place; everything before it decoded exactly, so its UTF-8 length is the offset. A U+FFFD that
 * was sent as such (EF BF BD) is passed over.
 */
function firstInvalidByte(bytes: Buffer): number {
  const text = new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes);
  let at = 0;
  let from = 0;
  for (let i = text.indexOf('\uFFFD'); i !== -1; i = text.indexOf('\uFFFD', i + 1)) {
    at += Buffer.byteLength(text.slice(from, i));
    from = i;
    if (bytes[at] !== 0xef || bytes[at + 1] !== 0xbf || bytes[at + 2] !== 0xbd) return at;
  }
  return bytes.length;
}

/** The body of a route that wants one; a request without one (or with an empty one) is a 400. */
export function requireBody(body: unknown): unknown {
  if (body === undefined) throw new BadRequestError('body: a JSON body is required');
  return body;
}
