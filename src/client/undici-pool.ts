/**
 * undici's connection pool and its `request`, without the rest of undici. The package's entry
 * module loads fetch, WebSocket, EventSource, caches, mocks and proxy agents (110 modules, ~6 MiB
 * of the peak RSS of a `wsmirror sync` that has nothing to do: bench/README.md, "Start-up and
 * memory"); the client uses only these two. undici has no `exports` map, so these paths are public files of the
 * package; `undici-internals.d.ts` types them as the entry module's `Pool` and `request`.
 */
import type { Dispatcher, Pool as UndiciPool } from 'undici';
import PoolOfUndici from 'undici/lib/dispatcher/pool.js';
import requestOfUndici from 'undici/lib/api/api-request.js';

export type Pool = UndiciPool;
export const Pool: typeof UndiciPool = PoolOfUndici;

/** `pool.request(options)` of undici's entry module, which adds it to every dispatcher there. */
export function request(pool: Pool, options: Dispatcher.RequestOptions): Promise<Dispatcher.ResponseData> {
  return requestOfUndici.call(pool, options);
}
