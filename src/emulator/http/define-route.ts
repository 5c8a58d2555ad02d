import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type * as z from 'zod';
import { describeIssues, type Endpoint } from '../../api/index.ts';
import type { EmulatorContext } from '../context.ts';
import { BadRequestError, NotFoundError } from '../errors.ts';
import type { ApiKeyGrant } from '../options.ts';
import { requireBody } from './body-parsers.ts';

type Out<S> = S extends z.ZodType ? z.output<S> : undefined;

export interface RouteInput<E extends Endpoint> {
  params: z.output<E['params']>;
  query: Out<E['query']>;
  body: Out<E['body']>;
  apiKey: ApiKeyGrant;
  request: FastifyRequest;
  reply: FastifyReply;
}

export interface RouteOptions {
  bodyLimit?: number;
}

/** Validates one part of a request; a failure is a 400 naming the place at fault. */
export function parseInput<S extends z.ZodType>(schema: S, value: unknown, where: string): z.output<S> {
  const result = schema.safeParse(value);
  if (!result.success) throw new BadRequestError(describeIssues(result.error.issues, where));
  return result.data;
}

/** Fastify's `:param` form of a `{param}` path. */
export function routePath(endpoint: Endpoint): string {
  return endpoint.path.replace(/\{(\w+)\}/g, ':$1');
}

/**
 * Registers one endpoint of the contract: path, method and success status come from the
 * endpoint table; params, query and body are validated with its zod schemas, so a malformed
 * request is a 400 naming what is wrong, before the handler runs. The handler returns the
 * response body.
 */
export function defineRoute<E extends Endpoint>(
  app: FastifyInstance,
  ctx: EmulatorContext,
  endpoint: E,
  handler: (input: RouteInput<E>) => unknown,
  options: RouteOptions = {},
): void {
  app.route({
    method: endpoint.method,
    url: routePath(endpoint),
    ...(options.bodyLimit === undefined ? {} : { bodyLimit: options.bodyLimit }),
    handler: async (request, reply) => {
      const params = parseInput(endpoint.params, request.params, 'path') as { workspaceId?: string };
      if (params.workspaceId !== ctx.workspaceId) throw new NotFoundError(`workspace ${params.workspaceId} not found`);
      const query = endpoint.query ? parseInput(endpoint.query, request.query ?? {}, 'query') : undefined;
      if (!endpoint.query && request.query && Object.keys(request.query).length > 0) {
        throw new BadRequestError(`query: this endpoint takes no query parameters`);
      }
      const body = endpoint.body ? parseInput(endpoint.body, requireBody(request.body), 'body') : undefined;
      const result = await handler({
        params, query, body, apiKey: request.apiKey!, request, reply,
      } as RouteInput<E>);
      reply.code(endpoint.status);
      return result;
    },
  });
}
