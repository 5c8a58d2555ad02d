import type { FastifyInstance, FastifyRequest } from 'fastify';
import { NotFoundError, UnauthorizedError } from '../errors.ts';
import type { ApiKeyGrant, EmulatorOptions } from '../options.ts';
import { Secret } from './secret.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The API key that authenticated this request (API routes only). */
    apiKey: ApiKeyGrant | undefined;
  }
}

export const ADMIN_PREFIX = '/_emulator/';

/** What a request reached: the admin surface, the API (with `/openapi.json`), or no route. */
export type Surface = 'admin' | 'api' | 'unmatched';

/**
 * The surface of the route the router matched, read from the route's registered pattern and
 * never from the URL as sent: `/%5Femulator/reset` and `/_emulator/reset` reach the same route,
 * so they need the same credential.
 */
export function surfaceOf(request: FastifyRequest): Surface {
  const route = request.is404 ? undefined : request.routeOptions.url;
  if (route === undefined) return 'unmatched';
  return route.startsWith(ADMIN_PREFIX) ? 'admin' : 'api';
}

function bearer(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (typeof header !== 'string') return undefined;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return m?.[1];
}

/**
 * The one place that decides who may call what: the admin surface wants the admin token, the API
 * a configured API key. A request that reaches no route wants the credential of the surface its
 * path names before it learns that (404): it reaches nothing, so the path as sent only decides
 * between 401 and 404. Secrets are compared in constant time.
 */
export class Authenticator {
  readonly #adminToken: Secret | undefined;
  readonly #keys: readonly { secret: Secret; grant: ApiKeyGrant }[];

  constructor(options: EmulatorOptions) {
    this.#adminToken = options.adminToken === undefined ? undefined : new Secret(options.adminToken);
    this.#keys = (options.apiKeys ?? []).map((grant) => ({ secret: new Secret(grant.key), grant }));
  }

  /** The configured key a token names; every key is compared, whichever matches. */
  #apiKey(token: string | undefined): ApiKeyGrant | undefined {
    if (token === undefined) return undefined;
    let found: ApiKeyGrant | undefined;
    for (const { secret, grant } of this.#keys) if (secret.matches(token) && found === undefined) found = grant;
    return found;
  }

  #isAdmin(token: string | undefined): boolean {
    return token !== undefined && this.#adminToken !== undefined && this.#adminToken.matches(token);
  }

  /**
   * Throws 401 (or 404 for the admin surface when it is off) unless the request carries the
   * credential its surface wants; returns the API key of an API request.
   */
  check(request: FastifyRequest, surface: Surface): ApiKeyGrant | undefined {
    const token = bearer(request);
    switch (surface) {
      case 'admin':
        if (this.#adminToken === undefined) {
          throw new NotFoundError('the admin surface is disabled: start the emulator with --admin-token');
        }
        if (!this.#isAdmin(token)) throw new UnauthorizedError('missing or invalid admin token');
        return undefined;
      case 'api': {
        const key = this.#apiKey(token);
        if (!key) throw new UnauthorizedError();
        return key;
      }
      case 'unmatched':
        this.check(request, request.url.startsWith(ADMIN_PREFIX) ? 'admin' : 'api');
        return undefined;
    }
  }
}

/**
 * Every request is authenticated first, in `onRequest`: before the body is read or parsed and
 * before any validation, so a caller without credentials learns nothing but 401.
 */
export function registerAuth(app: FastifyInstance, auth: Authenticator): void {
  app.decorateRequest('apiKey', undefined);
  app.addHook('onRequest', async (request) => {
    request.apiKey = auth.check(request, surfaceOf(request));
  });
}
