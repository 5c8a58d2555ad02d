import { lstatSync, statSync } from 'node:fs';

/** Which file a path names: its device and inode, the same for as long as the file is not replaced. */
export interface FileIdentity {
  readonly dev: bigint;
  readonly ino: bigint;
}

/**
 * How a path is looked at: `follow` goes through symbolic links to the file they point to (as
 * SQLite opens a mirror path); `own` takes the path's own entry, so a link put there is another
 * file (the sync lock file is never followed).
 */
export type PathLookup = 'follow' | 'own';

/** The file at `path` now; undefined when there is none. */
export function fileIdentity(path: string, lookup: PathLookup = 'follow'): FileIdentity | undefined {
  const stats = (lookup === 'follow' ? statSync : lstatSync)(path, { bigint: true, throwIfNoEntry: false });
  return stats === undefined ? undefined : { dev: stats.dev, ino: stats.ino };
}

/** Whether `path` still names the file `was` identified (a stat: cheap enough for every cycle). */
export function stillSameFile(path: string, was: FileIdentity, lookup: PathLookup = 'follow'): boolean {
  const now = fileIdentity(path, lookup);
  return now !== undefined && now.dev === was.dev && now.ino === was.ino;
}
