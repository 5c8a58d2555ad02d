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

function parseJsonBody(_request: FastifyRequest, body: Buffer): unknown {
  if (body.length === 0) return undefined;
  let text = body.toString('utf8');
  // A byte-order mark is no part of the JSON text (RFC 8259 lets a reader ignore it).
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new BadRequestError(`body is not valid JSON: ${(error as Error).message}`);
  }
}

/** The body of a route that wants one; a request without one (or with an empty one) is a 400. */
export function requireBody(body: unknown): unknown {
  if (body === undefined) throw new BadRequestError('body: a JSON body is required');
  return body;
}
