import type { FastifyInstance, FastifyRequest } from 'fastify';
import { NotFoundError, UnauthorizedError } from '../errors.ts';
import type { ApiKeyGrant, EmulatorOptions } from '../options.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The API key that authenticated this request (API routes only). */
    apiKey: ApiKeyGrant | undefined;
  }
}

export const ADMIN_PREFIX = '/_emulator/';

function bearer(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (typeof header !== 'string') return undefined;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return m?.[1];
}

/**
 * Every route checks auth before anything else (before the body is even read): the admin
 * surface wants the admin token, everything else a configured API key.
 */
export function registerAuth(app: FastifyInstance, options: EmulatorOptions): void {
  const keys = new Map((options.apiKeys ?? []).map((k) => [k.key, k]));
  app.decorateRequest('apiKey', undefined);
  app.addHook('onRequest', async (request) => {
    const token = bearer(request);
    if (request.url.startsWith(ADMIN_PREFIX)) {
      if (options.adminToken === undefined) {
        throw new NotFoundError('the admin surface is disabled: start the emulator with --admin-token');
      }
      if (token !== options.adminToken) throw new UnauthorizedError('missing or invalid admin token');
      return;
    }
    const key = token === undefined ? undefined : keys.get(token);
    if (!key) throw new UnauthorizedError();
    request.apiKey = key;
  });
}
