import { statfsSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import type { FilesystemRoom } from '../filesystem-room.ts';
import { resolvedMirrorPath, walFileOf } from './mirror-path.ts';

/**
 * The room on the filesystem holding a SQLite mirror file and its -wal (its directory, or that of
 * the file a link points to): what unprivileged writers may still use, the whole, and the mirror's
 * own size (file and -wal). Undefined when the filesystem cannot be asked.
 */
export function filesystemRoom(file: string): FilesystemRoom | undefined {
  if (file === ':memory:') return undefined;
  const resolved = resolvedMirrorPath(file);
  const dir = dirname(resolved);
  try {
    const fs = statfsSync(dir);
    const size = (path: string) => statSync(path, { throwIfNoEntry: false })?.size ?? 0;
    return { path: dir, freeBytes: fs.bavail * fs.bsize, totalBytes: fs.blocks * fs.bsize, mirrorBytes: size(resolved) + size(walFileOf(file)) };
  } catch {
    return undefined;
  }
}

/**
 * SQLite's "database or disk is full" (SQLITE_FULL) with what it leaves out: the mirror file, and
 * the room on the filesystem of its directory (where the -wal grows too). Undefined for any other
 * error.
 */
export function explainDiskFull(file: string, error: unknown): string | undefined {
  if (file === ':memory:' || !String((error as { code?: unknown } | null)?.code ?? '').startsWith('SQLITE_FULL')) return undefined;
  const message = error instanceof Error ? error.message : String(error);
  const dir = dirname(resolvedMirrorPath(file));
  const fs = filesystemRoom(file);
  const room = fs === undefined ? ' is full' : ` has ${megabytes(fs.freeBytes)} free of ${megabytes(fs.totalBytes)}`;
  return `${message} (the SQLite mirror ${file}): the filesystem of ${dir}${room}; make room there, `
    + 'or move the mirror (mirror.url) to a filesystem with more';
}

function megabytes(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}
