import { statSync } from 'node:fs';
import { dirname } from 'node:path';
import { WRITTEN_BY_OTHERS, othersAccess } from '../../api/file-access.ts';
import { resolvedMirrorPath } from './mirror-path.ts';

/**
 * A SQLite mirror has no roles: whoever may write its file (or its -wal, or put a file of theirs
 * in its place through its directory) writes its outbox, whose entries go upstream with the
 * daemon's API key. One line per such file or directory, naming it and the chmod that ends it
 * (the rule of api/file-access.ts, for writing: being read by others is what BI readers need).
 * Said at each open for writing and failed by `wsmirror check`; never changed by wsmirror, as the
 * file's modes are the user's to choose.
 */
export function sharedWriteAccess(mirrorPath: string): string[] {
  if (mirrorPath === ':memory:') return [];
  const file = resolvedMirrorPath(mirrorPath);
  const consequence = 'any of them can write entries into its outbox, which go upstream with the API key';
  const lines: string[] = [];
  for (const path of [file, `${file}-wal`, `${file}-shm`]) {
    const access = modeOf(path, (mode) => othersAccess(mode, WRITTEN_BY_OTHERS));
    if (access !== undefined) lines.push(`the SQLite mirror ${path} ${access}: ${consequence}: chmod go-w ${path}`);
  }
  const dir = dirname(file);
  const access = modeOf(dir, (mode) => othersAccess(mode, WRITTEN_BY_OTHERS));
  if (access !== undefined) {
    lines.push(`the directory ${dir} of the SQLite mirror ${access}: any of them can put a file of theirs in place of the mirror or its -wal, `
      + `and so write entries into its outbox, which go upstream with the API key: chmod go-w ${dir} (or move the mirror to a directory of its own)`);
  }
  return lines;
}

function modeOf(path: string, rule: (mode: number) => string | undefined): string | undefined {
  try {
    const stats = statSync(path, { throwIfNoEntry: false });
    return stats === undefined ? undefined : rule(stats.mode);
  } catch {
    // Unreadable: the access problems say so.
    return undefined;
  }
}
