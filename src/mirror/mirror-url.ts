import { redactUrlPasswords } from '../api/secret-redaction.ts';
import { ConfigError } from '../errors.ts';
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

/** The URL with any password hidden, safe for messages and logs. */
export { redactUrlPasswords as redactUrl };

/** Parses `sqlite:PATH`, `sqlite://PATH`, `postgres://…` or `postgresql://…`. */
export function parseMirrorUrl(url: string): MirrorLocation {
  const display = redactUrlPasswords(url);
  if (url.startsWith('sqlite:')) {
    let path = url.slice('sqlite:'.length);
    if (path.startsWith('//')) path = path.slice(2);
    if (path === '') throw new ConfigError(`mirror URL ${display}: the SQLite file path is empty (expected sqlite:PATH)`);
    return { dialect: 'sqlite', path, display };
  }
  if (/^postgres(ql)?:\/\//.test(url)) {
    const read = readPostgresUrl(url);
    if ('problem' in read) throw new ConfigError(`mirror URL ${display} ${read.problem}`);
    return { dialect: 'postgres', connectionString: read.connectionString, display };
  }
  throw new ConfigError(`mirror URL ${display} is not supported: expected sqlite:PATH or postgres://USER@HOST:PORT/DATABASE`);
}

/** Why a postgres:// URL cannot be used, phrased to follow it; undefined for any other URL, or one that can. */
export function postgresUrlProblem(url: string): string | undefined {
  if (!/^postgres(ql)?:\/\//.test(url)) return undefined;
  const read = readPostgresUrl(url);
  return 'problem' in read ? read.problem : undefined;
}
