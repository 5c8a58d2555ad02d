/**
 * A postgres:// (postgresql://) mirror URL as libpq reads it, the connection string that
 * node-postgres reads the same way, and the URL as messages show it.
 */
import { unparsedUrlForMessages, urlForMessages } from '../api/secret-redaction.ts';

/**
 * The connection string node-postgres gets for a postgres:// URL, or why the URL cannot be used
 * (phrased to follow it); with either, the URL as messages show it (`display`).
 */
export function readPostgresUrl(url: string): ({ connectionString: string } | { problem: string }) & { display: string } {
  const parsed = parsePostgresUrl(url);
  if (parsed === undefined) {
    const problem = 'is not a valid postgres:// URL (a password\'s @, /, #, ? or space is percent-encoded: %40, %2F, %23, %3F, %20)';
    return { problem, display: unparsedUrlForMessages(url) };
  }
  return { ...withSslMode(url, parsed.url), display: parsedDisplay(parsed) };
}

/**
 * The URL rebuilt from its parts without its password (urlForMessages: its user shown, a
 * DBA's way to tell URLs apart). The fragment, which libpq does not read, is left out.
 */
function parsedDisplay({ url, hostless }: ParsedUrl): string {
  return urlForMessages(url, { keepUser: true, host: hostless ? '' : url.host });
}

interface ParsedUrl {
  url: URL;
  /** libpq's `postgres://user@/db?host=…`, read with a placeholder host. */
  hostless: boolean;
}

/**
 * The URL's parts, or undefined when it is none. libpq's form for a Unix-domain socket,
 * `postgres://user:password@/db?host=/run/postgresql`, has credentials and an empty host, which
 * WHATWG URLs refuse: it is read with a placeholder host, as node-postgres reads it too.
 */
function parsePostgresUrl(url: string): ParsedUrl | undefined {
  try {
    return { url: new URL(url), hostless: false };
  } catch {
    if (!/^postgres(ql)?:\/\/[^/?#]*@\//.test(url)) return undefined;
    try {
      return { url: new URL(url.replace('@/', '@placeholder/')), hostless: true };
    } catch {
      return undefined;
    }
  }
}

/**
 * The connection string that has node-postgres read the URL's `sslmode` as libpq does. node-postgres
 * 8 takes `sslmode=prefer`, `require` and `verify-ca` for `verify-full` (a server with a
 * self-signed certificate is refused, and it prints a SECURITY WARNING of several lines on
 * stderr) unless the URL also says `uselibpqcompat=true`:
 * wsmirror adds that, so that they mean what libpq says, as a DBA expects of a libpq URL. What
 * node-postgres still does not do as libpq is refused here, by name: `allow` (plain text first),
 * `verify-ca` without `sslrootcert` (libpq would read ~/.postgresql/root.crt), and values libpq
 * does not know (node-postgres would verify fully in silence). A URL that sets `uselibpqcompat`
 * itself is left as it is.
 */
function withSslMode(url: string, parsed: URL): { connectionString: string } | { problem: string } {
  const mode = parsed.searchParams.get('sslmode');
  if (mode === null || parsed.searchParams.has('uselibpqcompat')) return { connectionString: url };
  switch (mode) {
    case 'disable':
    case 'verify-full':
    case 'no-verify': // node-postgres' own: TLS, no check of the certificate
      return { connectionString: url };
    case 'verify-ca':
      if (!parsed.searchParams.has('sslrootcert')) {
        return { problem: 'sets sslmode=verify-ca without sslrootcert=FILE, the certificate of the authority the server\'s must be signed by' };
      }
      return { connectionString: withLibpqSemantics(url) };
    case 'prefer':
    case 'require':
      return { connectionString: withLibpqSemantics(url) };
    case 'allow':
      return { problem: 'sets sslmode=allow, which wsmirror cannot honour (it cannot fall back from plain text to TLS): use sslmode=disable or sslmode=require' };
    default:
      return { problem: `sets sslmode=${mode}: expected disable, prefer, require, verify-ca or verify-full (or no-verify)` };
  }
}

/** `uselibpqcompat=true` put before the query's `sslmode=` (its last one: a password before the query could hold the text). */
function withLibpqSemantics(url: string): string {
  const at = Math.max(url.lastIndexOf('?sslmode='), url.lastIndexOf('&sslmode=')) + 1;
  return `${url.slice(0, at)}uselibpqcompat=true&${url.slice(at)}`;
}
