import type { FastifyError, FastifyInstance } from 'fastify';
import { RECORDS_PAYLOAD_LIMIT_BYTES } from '../../api/index.ts';
import { ApiError } from '../errors.ts';

function body(message: string) {
  return { error: { message } };
}

/** Maps every error to the spec's body; nothing escapes as a bare 500 with a stack trace. */
export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError | ApiError, request, reply) => {
    if (error instanceof ApiError) return reply.code(error.status).send(body(error.message));
    switch (error.code) {
      case 'FST_ERR_CTP_BODY_TOO_LARGE':
        return reply
          .code(413)
          .send(body(`payload too large: request bodies are limited to ${RECORDS_PAYLOAD_LIMIT_BYTES} bytes (6 MB)`));
      case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
        return reply.code(400).send(body(`unsupported content type ${JSON.stringify(request.headers['content-type'] ?? '')}: send application/json`));
      case 'FST_ERR_CTP_EMPTY_JSON_BODY':
        return reply.code(400).send(body('body: a JSON body is required'));
      case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
        return reply.code(400).send(body('content-length does not match the body'));
    }
    if (error instanceof SyntaxError || error.code === 'FST_ERR_CTP_INVALID_JSON_BODY') {
      return reply.code(400).send(body(`body is not valid JSON: ${error.message}`));
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
