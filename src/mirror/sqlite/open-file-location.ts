import { readdirSync, readlinkSync, statSync } from 'node:fs';
import type { FileIdentity } from './file-identity.ts';

/**
 * Where a file this process has open is now: `at` the path that names it (the kernel follows a
 * rename with the open file), `deleted` once no path names it (removed, or another file renamed
 * over it), undefined where that cannot be known (no /proc: not Linux). Found through
 * /proc/self/fd by device and inode, with stat and readlink only: opening and closing a file
 * descriptor of the mirror would drop SQLite's POSIX locks on it.
 */
export type OpenFileLocation = { readonly at: string } | { readonly deleted: true };

export function openFileLocation(identity: FileIdentity): OpenFileLocation | undefined {
  let fds: string[];
  try {
    fds = readdirSync('/proc/self/fd');
  } catch {
    return undefined;
  }
  for (const fd of fds) {
    const link = `/proc/self/fd/${fd}`;
    try {
      const stats = statSync(link, { bigint: true, throwIfNoEntry: false });
      if (stats === undefined || stats.dev !== identity.dev || stats.ino !== identity.ino) continue;
      if (stats.nlink === 0n) return { deleted: true };
      return { at: readlinkSync(link) };
    } catch {
      // A descriptor closed meanwhile.
    }
  }
  return undefined;
}
