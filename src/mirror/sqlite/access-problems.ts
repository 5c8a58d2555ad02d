import { accessSync, constants, existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { resolvedMirrorPath } from './mirror-path.ts';

/**
 * What would keep this process from writing a SQLite mirror, one line each (see
 * DialectDriver.accessProblems and Dialect.creationProblems). SQLite writes the file and, beside
 * it, the -wal and -shm files (WAL mode), so both the file and its directory must be writable:
 * for a mirror path that is a symbolic link, the directory of the file it points to.
 */

/** An existing mirror file; `readonly` when the connection was opened so. */
export function accessProblems(file: string, readonly: boolean): string[] {
  const problems: string[] = [];
  if (readonly || !writable(file)) problems.push(`this user cannot write ${resolve(file)}`);
  const dir = dirname(resolvedMirrorPath(file));
  if (!writable(dir)) problems.push(`this user cannot create files in ${dir} (the -wal and -shm files live beside the mirror)`);
  return problems;
}

/**
 * A mirror not made yet at `path`: the first sync creates the file in its directory, not the
 * directory itself (a typo in `mirror.url` would leave a tree of directories behind).
 */
export function creationProblems(path: string): string[] {
  if (path === ':memory:' || existsSync(path)) return [];
  const dir = dirname(resolvedMirrorPath(path));
  if (!existsSync(dir)) return [`the directory ${dir} does not exist: wsmirror creates the mirror file ${path}, not its directory; create the directory or correct mirror.url`];
  return writable(dir) ? [] : [`the mirror ${path} does not exist and this user cannot create files in ${dir}`];
}

/**
 * The message of a failed open or write of the mirror at `file`, followed, when SQLite refused
 * access (a read-only or unopenable file), by the problems above that explain it: SQLite's own
 * words ("attempt to write a readonly database") name neither the directory nor the file. A
 * file system error (ENOENT of the lock file beside a mirror whose directory is missing) is
 * replaced by the problems, which say it better.
 */
export function explainAccessFailure(file: string, error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const code = String((error as { code?: unknown } | null)?.code ?? '');
  const fileSystemError = code === 'ENOENT' || code === 'EACCES';
  if (file === ':memory:' || !(fileSystemError || /^SQLITE_(READONLY|CANTOPEN|PERM)/.test(code))) return message;
  const problems = existsSync(file) ? accessProblems(file, false) : creationProblems(file);
  if (problems.length === 0) return message;
  return fileSystemError ? problems.join('; ') : `${message}: ${problems.join('; ')}`;
}

function writable(path: string): boolean {
  try {
    accessSync(path, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}
