import { maxHeaderSize, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { RECORDS_PAYLOAD_LIMIT_BYTES } from '../../api/index.ts';
import { ApiError, BadRequestError } from '../errors.ts';
import type { Authenticator } from './auth.ts';

// Oversized bodies up to this declared length are read and dropped after the 413; longer ones
// (or of unknown length) close the connection, at the risk of a reset.
const DRAIN_LIMIT_BYTES = 64 * 1024 * 1024;

function declaredLength(request: FastifyRequest): number {
  const value = Number(request.headers['content-length']);
  return Number.isFinite(value) ? value : Number.POSITIVE_INFINITY;
}

function body(message: string) {
  return { error: { message } };
}

/** Maps every error to the spec's body; nothing escapes as a bare 500 with a stack trace. */
export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError | ApiError, request, reply) => {
    if (error instanceof ApiError) {
      // Refused before its body was read: close rather than read a body nobody will look at.
      if (error.status === 401) reply.header('connection', 'close');
      return reply.code(error.status).send(body(error.message));
    }
    switch (error.code) {
      case 'FST_ERR_CTP_BODY_TOO_LARGE':
        // fastify asks to close the connection; closing with most of the body unread makes the
        // kernel reset it, and the client, still sending, loses this answer. Kept open, Node reads
        // the rest of the body and drops it (bounded by the declared length and the request
        // timeout), so the 413 always arrives.
        if (declaredLength(request) <= DRAIN_LIMIT_BYTES) reply.removeHeader('connection');
        return reply
          .code(413)
          .send(body(`payload too large: request bodies are limited to ${RECORDS_PAYLOAD_LIMIT_BYTES} bytes (6 MB)`));
      case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
        return reply.code(400).send(body(`unsupported content type ${JSON.stringify(request.headers['content-type'] ?? '')}: send application/json`));
      case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
        return reply.code(400).send(body('content-length does not match the body'));
    }
    const status = typeof error.statusCode === 'number' ? error.statusCode : 500;
    if (status >= 400 && status < 500) return reply.code(status).send(body(error.message));
    request.log.error({ err: error }, 'internal error');
    return reply.code(500).send(body('internal server error'));
  });
  app.setNotFoundHandler((request, reply) => {
    reply.code(404).send(body(`no such endpoint: ${request.method} ${request.url.split('?')[0]}`));
  });
}

/**
 * Fastify's `frameworkErrors`: a URL the router cannot read (a malformed percent-encoding, a path
 * parameter over the router's limit). Such a request reaches no route, so it is authenticated as
 * one (401 without a credential) before it is told what is wrong with its URL.
 */
export function frameworkErrorHandler(auth: Authenticator) {
  return (error: FastifyError, request: FastifyRequest, reply: FastifyReply): void => {
    let answer: ApiError;
    try {
      auth.check(request, 'unmatched');
      answer = new BadRequestError(
        error.code === 'FST_ERR_MAX_PARAM_LENGTH'
          ? 'path: a path parameter is over 1000 characters'
          : 'path: the URL is not valid (a malformed percent-encoding)',
      );
    } catch (refused) {
      if (!(refused instanceof ApiError)) throw refused;
      answer = refused;
    }
    void reply.code(answer.status).send(body(answer.message));
  };
}

/**
 * Fastify's `clientErrorHandler`: Node could not read the request at all (headers over Node's
 * limit, a malformed request line or header, a timeout). There is no request yet, so no
 * credential to check: the answer names only what was wrong with the HTTP, in the spec's error
 * body, and the connection is closed.
 */
export function answerClientError(error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, message] =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? [431, `request headers too large: at most ${maxHeaderSize} bytes`]
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'the request did not arrive in time']
        : [400, `malformed HTTP request${error.code ? ` (${error.code})` : ''}`];
  const text = JSON.stringify(body(message));
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\ncontent-type: application/json; charset=utf-8\r\n` +
        `content-length: ${Buffer.byteLength(text)}\r\nconnection: close\r\n\r\n${text}`,
    );
  }
  socket.destroy();
}
