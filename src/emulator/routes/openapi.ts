import type { FastifyInstance } from 'fastify';
import { buildOpenApiDocument } from '../../api/index.ts';

/** `/openapi.json`: the API description generated from the zod contract (auth required, like every route). */
export function registerOpenApiRoute(app: FastifyInstance): void {
  let document: object | undefined;
  app.get('/openapi.json', async (request) => {
    document ??= buildOpenApiDocument(`${request.protocol}://${request.host}`);
    return document;
  });
}
