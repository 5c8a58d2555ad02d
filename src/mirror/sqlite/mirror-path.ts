import { lstatSync, readlinkSync, realpathSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

/** SQLite's own bound on the links it follows in one path (SQLITE_MAX_SYMLINK). */
const MAX_LINKS = 100;

/**
 * The file a SQLite mirror path names, as SQLite opens it: absolute, and when the path is a
 * symbolic link, the file the link points to, also one that does not exist yet (SQLite creates
 * it, and keeps its -wal and -shm files beside it). A mirror named through a link and by its file
 * is one mirror: its sync lock file goes beside this path, and its directory is the one that
 * must be writable. A path that is no link comes back as it was given, made absolute; one that
 * does not resolve (a loop of links) as far as it got, and opening it fails with SQLite's message.
 */
export function resolvedMirrorPath(path: string): string {
  if (path === ':memory:') return path;
  let current = resolve(path);
  for (let links = 0; links < MAX_LINKS; links++) {
    let target: string;
    try {
      if (lstatSync(current, { throwIfNoEntry: false })?.isSymbolicLink() !== true) return current;
      target = readlinkSync(current);
    } catch {
      return current;
    }
    // Relative to the link's folder as the system resolves it: `..` leaves the real folder.
    current = resolve(realFolder(dirname(current)), target);
  }
  return current;
}

function realFolder(dir: string): string {
  try {
    return realpathSync(dir);
  } catch {
    return dir;
  }
}

/** The -wal file SQLite keeps beside the mirror file (beside the file a link points to). */
export function walFileOf(mirrorPath: string): string {
  return `${resolvedMirrorPath(mirrorPath)}-wal`;
}
