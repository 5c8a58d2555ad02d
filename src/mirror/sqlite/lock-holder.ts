import { readFileSync } from 'node:fs';
import type { FileIdentity } from './file-identity.ts';

/** Bytes of a holder's command line shown: enough for `node …/bin/wsmirror run --config FILE`. */
const MAX_COMMAND_CHARS = 200;

/**
 * Who holds the lock on a SQLite lock file, for the message of a process refused it: the
 * process (its id and command line) holding a POSIX lock on that file, as Linux lists them in
 * /proc/locks (`1: POSIX ADVISORY WRITE <pid> <major>:<minor>:<inode> <start> <end>`).
 * Undefined where that cannot be told: another system, a holder in another PID namespace (a
 * container: its pid shows as 0 or not at all), the lock already gone.
 */
export function lockHolder(file: FileIdentity): string | undefined {
  let table: string;
  try {
    table = readFileSync('/proc/locks', 'utf8');
  } catch {
    return undefined;
  }
  const device = deviceNumbers(file.dev);
  for (const line of table.split('\n')) {
    const fields = line.trim().split(/\s+/);
    // `->` marks a waiter blocked on the lock, not a holder.
    if (fields[1] !== 'POSIX' || fields.includes('->')) continue;
    const pid = Number(fields[4]);
    const [major, minor, inode] = (fields[5] ?? '').split(':');
    if (!(pid > 0) || pid === process.pid || inode !== String(file.ino)) continue;
    if (parseInt(major ?? '', 16) !== device.major || parseInt(minor ?? '', 16) !== device.minor) continue;
    const command = commandLine(pid);
    return `process ${pid}${command === undefined ? '' : ` (${command})`}`;
  }
  return undefined;
}

/** Linux's major and minor numbers of a device number as stat gives it (glibc's encoding). */
function deviceNumbers(dev: bigint): { major: number; minor: number } {
  return {
    major: Number(((dev >> 8n) & 0xfffn) | ((dev >> 32n) & ~0xfffn)),
    minor: Number((dev & 0xffn) | ((dev >> 12n) & ~0xffn)),
  };
}

/** A process's command line, its arguments joined by spaces; undefined once it is gone. */
function commandLine(pid: number): string | undefined {
  try {
    const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter((arg) => arg !== '');
    // Not for a terminal to interpret: control characters go.
    const text = args.join(' ').replace(/[\u0000-\u001f\u007f-\u009f]/g, '?');
    return text === '' ? undefined : text.length > MAX_COMMAND_CHARS ? `${text.slice(0, MAX_COMMAND_CHARS - 1)}…` : text;
  } catch {
    return undefined;
  }
}
