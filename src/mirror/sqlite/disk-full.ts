import { statfsSync } from 'node:fs';
import { dirname } from 'node:path';
import { resolvedMirrorPath } from './mirror-path.ts';

/**
 * SQLite's "database or disk is full" (SQLITE_FULL) with what it leaves out: the mirror file, and
 * the room on the filesystem of its directory (where the -wal grows too). Undefined for any other
 * error.
 */
export function explainDiskFull(file: string, error: unknown): string | undefined {
  if (file === ':memory:' || !String((error as { code?: unknown } | null)?.code ?? '').startsWith('SQLITE_FULL')) return undefined;
  const message = error instanceof Error ? error.message : String(error);
  const dir = dirname(resolvedMirrorPath(file));
  let room = '';
  try {
    const fs = statfsSync(dir);
    room = ` has ${megabytes(fs.bavail * fs.bsize)} free of ${megabytes(fs.blocks * fs.bsize)}`;
  } catch {
    room = ' is full';
  }
  return `${message} (the SQLite mirror ${file}): the filesystem of ${dir}${room}; make room there, `
    + 'or move the mirror (mirror.url) to a filesystem with more';
}

function megabytes(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}
