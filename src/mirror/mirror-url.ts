import { redactUrlPasswords } from '../api/secret-redaction.ts';
import { ConfigError } from '../errors.ts';
import { parsePostgresUrl } from './postgres-url.ts';

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
    if (parsePostgresUrl(url) === undefined) throw new ConfigError(`mirror URL ${display} is not a valid postgres:// URL`);
    return { dialect: 'postgres', connectionString: url, display };
  }
  throw new ConfigError(`mirror URL ${display} is not supported: expected sqlite:PATH or postgres://USER@HOST:PORT/DATABASE`);
}
