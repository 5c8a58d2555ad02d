import { ConfigError } from '../errors.ts';
import { unparsedUrlForMessages } from '../api/secret-redaction.ts';
import { readPostgresUrl } from './postgres-url.ts';

export type MirrorLocation =
  | { dialect: 'sqlite'; path: string; display: string }
  | { dialect: 'postgres'; connectionString: string; display: string };

/** The Postgres schema of a mirror when none is configured. */
export const DEFAULT_PG_SCHEMA = 'public';
export const PG_SCHEMA_RULE = 'a Postgres schema name (1 to 63 bytes)';

/** The schema name, or undefined when Postgres could not hold it. */
export function checkPgSchema(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' && Buffer.byteLength(value) <= 63 && !value.includes('\0') ? value : undefined;
}

/**
 * The mirror URL as messages and logs show it: a Postgres URL rebuilt without its password, a
 * value that is no URL with everything after its user part hidden, a SQLite URL as it is.
 */
export function displayMirrorUrl(url: string): string {
  if (url.startsWith('sqlite:')) return url;
  return isPostgresUrl(url) ? readPostgresUrl(url).display : unparsedUrlForMessages(url);
}

const isPostgresUrl = (url: string) => /^postgres(ql)?:\/\//.test(url);

/** Parses `sqlite:PATH`, `sqlite://PATH`, `postgres://…` or `postgresql://…`. */
export function parseMirrorUrl(url: string): MirrorLocation {
  if (url.startsWith('sqlite:')) {
    let path = url.slice('sqlite:'.length);
    if (path.startsWith('//')) path = path.slice(2);
    if (path === '') throw new ConfigError(`mirror URL ${url}: the SQLite file path is empty (expected sqlite:PATH)`);
    return { dialect: 'sqlite', path, display: url };
  }
  if (isPostgresUrl(url)) {
    const read = readPostgresUrl(url);
    if ('problem' in read) throw new ConfigError(`mirror URL ${read.display} ${read.problem}`);
    return { dialect: 'postgres', connectionString: read.connectionString, display: read.display };
  }
  throw new ConfigError(`mirror URL ${unparsedUrlForMessages(url)} is not supported: expected sqlite:PATH or postgres://USER@HOST:PORT/DATABASE`);
}

/** Why a postgres:// URL cannot be used, phrased to follow it; undefined for any other URL, or one that can. */
export function postgresUrlProblem(url: string): string | undefined {
  if (!isPostgresUrl(url)) return undefined;
  const read = readPostgresUrl(url);
  return 'problem' in read ? read.problem : undefined;
}
