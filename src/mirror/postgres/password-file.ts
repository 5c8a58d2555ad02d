/**
 * libpq's password file, read by libpq's rules (`psql` and wsmirror agree on which password a
 * server gets): lines of `host:port:database:username:password`; `#` starts a comment line; a
 * field of `*` alone matches anything; `\:` and `\\` stand for `:` and `\` (any character after
 * a `\` stands for itself); the FIRST matching line wins; a file that group or other users can
 * access is ignored with libpq's warning on stderr.
 */
import { readFile, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';

/** What a line is matched against: pg's connection parameters (the URL filled in with PG* variables and defaults). */
export interface PasswordFileConnection {
  host?: string | undefined;
  port?: number | string | undefined;
  database?: string | undefined;
  user?: string | undefined;
}

/** The file libpq reads: PGPASSFILE, else ~/.pgpass; `named` says how, for messages. */
export function passwordFilePath(env: NodeJS.ProcessEnv = process.env): { file: string; named: string } {
  return env.PGPASSFILE ? { file: env.PGPASSFILE, named: 'PGPASSFILE' } : { file: join(homedir(), '.pgpass'), named: 'default ~/.pgpass' };
}

/** The password of the first line matching the connection, or why there is none (phrased to follow the file's name). */
export async function passwordFromFile(file: string, connection: PasswordFileConnection): Promise<{ password: string } | { none: string }> {
  let mode: number;
  try {
    const stats = await stat(file);
    if (!stats.isFile()) {
      warn(`WARNING: password file "${file}" is not a plain file`);
      return { none: 'is not a plain file' };
    }
    mode = stats.mode;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return { none: code === 'ENOENT' ? 'does not exist' : `cannot be read (${code ?? String(error)})` };
  }
  if ((mode & 0o077) !== 0) {
    warn(`WARNING: password file "${file}" has group or world access; permissions should be u=rw (0600) or less`);
    return { none: 'is ignored: group or other users can access it (give it mode 0600)' };
  }
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    return { none: `cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})` };
  }
  const wanted = wantedFields(connection);
  const described = wanted.map((field) => field[0]).join(':');
  if (wanted.some((candidates) => candidates[0] === '')) return { none: `is not read for a connection without a user or a database (${described})` };
  for (const line of text.split('\n')) {
    const read = lineFields(line.replace(/\r$/, ''));
    if (read === undefined || !wanted.every((candidates, i) => read.fields[i] === WILDCARD || candidates.includes(read.fields[i] as string))) continue;
    const { password } = read;
    // libpq takes an empty password as none, and looks no further.
    return password === '' ? { none: `has an empty password on its first line for ${described}` } : { password };
  }
  return { none: `has no line for ${described}` };
}

const WILDCARD = Symbol('*');

/**
 * What each of the first four fields must be, as libpq fills the connection in: a Unix-domain
 * socket's directory matches `localhost` (libpq's rule for its default socket directory, which
 * differs between builds) or the directory itself; no port is 5432.
 */
function wantedFields(connection: PasswordFileConnection): string[][] {
  const host = connection.host ?? '';
  const hosts = host === '' ? ['localhost'] : host.startsWith('/') ? ['localhost', host] : [host];
  const port = connection.port === undefined || connection.port === '' ? '5432' : String(connection.port);
  return [hosts, [port], [connection.database ?? ''], [connection.user ?? '']];
}

/** The four fields matched (WILDCARD for `*`) and the password, unescaped; undefined for a comment or a line of fewer fields. */
function lineFields(line: string): { fields: (string | typeof WILDCARD)[]; password: string } | undefined {
  if (line === '' || line.startsWith('#')) return undefined;
  const fields: (string | typeof WILDCARD)[] = [];
  let field = '';
  let raw = '';
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (c === '\\' && i + 1 < line.length) {
      field += line[++i];
      raw += `\\${line[i]}`;
    } else if (c === ':') {
      // The password ends at its first unescaped `:`; what follows is ignored.
      if (fields.length === 4) break;
      fields.push(raw === '*' ? WILDCARD : field);
      field = '';
      raw = '';
    } else {
      field += c;
      raw += c;
    }
  }
  return fields.length < 4 ? undefined : { fields, password: field };
}

function warn(message: string): void {
  process.stderr.write(`${message}\n`);
}
