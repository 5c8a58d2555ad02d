import type { Upstream } from '../../src/sync/index.ts';

/**
 * The upstream port with some of its calls replaced: how a test makes one kind of request fail
 * (a 503, a 401, an answer lost after the request went out) while every other call reaches the
 * real client, as powersync-js's tests inject a transport.
 */
export function upstreamWith(client: Upstream, overrides: Partial<Upstream>): Upstream {
  return new Proxy(client, {
    get(target, prop, receiver) {
      const override = (overrides as Record<PropertyKey, unknown>)[prop];
      if (override !== undefined) return override;
      const value = Reflect.get(target, prop, receiver) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}
