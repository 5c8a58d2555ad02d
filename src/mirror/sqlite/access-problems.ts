import { accessSync, constants, existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

/**
 * What would keep this process from writing a SQLite mirror, one line each (see
 * DialectDriver.accessProblems and Dialect.creationProblems). SQLite writes the file and, beside
 * it, the -wal and -shm files (WAL mode), so both the file and its directory must be writable.
 */

/** An existing mirror file; `readonly` when the connection was opened so. */
export function accessProblems(file: string, readonly: boolean): string[] {
  const problems: string[] = [];
  if (readonly || !writable(file)) problems.push(`this user cannot write ${resolve(file)}`);
  const dir = dirname(resolve(file));
  if (!writable(dir)) problems.push(`this user cannot create files in ${dir} (the -wal and -shm files live beside the mirror)`);
  return problems;
}

/** A mirror not made yet at `path`: the first sync creates the file in its directory. */
export function creationProblems(path: string): string[] {
  if (path === ':memory:' || existsSync(path)) return [];
  const dir = dirname(path);
  return writable(dir) ? [] : [`the mirror ${path} does not exist and this user cannot create files in ${dir}`];
}

function writable(path: string): boolean {
  try {
    accessSync(path, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}
