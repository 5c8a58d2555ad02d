/**
 * A postgres:// (postgresql://) mirror URL as libpq reads it, and the connection string that
 * node-postgres reads the same way.
 */

/**
 * The URL's parts, or undefined when it is none. libpq's form for a Unix-domain socket,
 * `postgres://user:password@/db?host=/run/postgresql`, has credentials and an empty host, which
 * WHATWG URLs refuse: it is read with a placeholder host, as node-postgres reads it too.
 */
export function parsePostgresUrl(url: string): URL | undefined {
  try {
    return new URL(url);
  } catch {
    if (!/^postgres(ql)?:\/\/[^/?#]*@\//.test(url)) return undefined;
    try {
      return new URL(url.replace('@/', '@placeholder/'));
    } catch {
      return undefined;
    }
  }
}
