import { maxHeaderSize, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { RECORDS_PAYLOAD_LIMIT_BYTES } from '../../api/index.ts';
import { ApiError, BadRequestError } from '../errors.ts';
import type { Authenticator } from './auth.ts';
import { settleUnreadBody, stopDraining } from './unread-body.ts';

function body(message: string) {
  return { error: { message } };
}

/** The status and message an error is answered with. */
function answerOf(error: FastifyError | ApiError, request: FastifyRequest): [number, string] {
  if (error instanceof ApiError) return [error.status, error.message];
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return [413, `payload too large: request bodies are limited to ${RECORDS_PAYLOAD_LIMIT_BYTES} bytes (6 MB)`];
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return [400, `unsupported content type ${JSON.stringify(request.headers['content-type'] ?? '')}: send application/json`];
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return [400, 'content-length does not match the body'];
  }
  const status = typeof error.statusCode === 'number' ? error.statusCode : 500;
  if (status >= 400 && status < 500) return [status, error.message];
  request.log.error({ err: error }, 'internal error');
  return [500, 'internal server error'];
}

/**
 * Maps every error to the spec's body; nothing escapes as a bare 500 with a stack trace. Many
 * come before the body was read (401 first of all, and 413): the rest of it is read first, so
 * the answer arrives (settleUnreadBody).
 */
export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler(async (error: FastifyError | ApiError, request, reply) => {
    const [status, message] = answerOf(error, request);
    await settleUnreadBody(request, reply);
    return reply.code(status).send(body(message));
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
    void settleUnreadBody(request, reply).then(() => reply.code(answer.status).send(body(answer.message)));
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
  // A request refused before its body was read waits for that body: its answer is the one the
  // client is waiting for, and goes now.
  if (stopDraining(socket)) return;
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
