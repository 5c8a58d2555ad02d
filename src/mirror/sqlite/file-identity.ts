import { statSync } from 'node:fs';

/** Which file a path names: its device and inode, the same for as long as the file is not replaced. */
export interface FileIdentity {
  readonly dev: bigint;
  readonly ino: bigint;
}

/** The file at `path` now; undefined when there is none. */
export function fileIdentity(path: string): FileIdentity | undefined {
  const stats = statSync(path, { bigint: true, throwIfNoEntry: false });
  return stats === undefined ? undefined : { dev: stats.dev, ino: stats.ino };
}

/** Whether `path` still names the file `was` identified (a stat: cheap enough for every cycle). */
export function stillSameFile(path: string, was: FileIdentity): boolean {
  const now = fileIdentity(path);
  return now !== undefined && now.dev === was.dev && now.ino === was.ino;
}
