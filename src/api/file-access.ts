/**
 * The one rule of wsmirror's warnings about files that users other than their owner may get at
 * (an API key file, a configuration file holding the key, a SQLite mirror and its directory): the
 * bits of the mode that let its group or everyone read, or write, it. Pure: callers stat the file.
 */

/** Mode bits that let the group or everyone read a file. */
export const READ_BY_OTHERS = 0o044;
/** Mode bits that let the group or everyone write a file (or create and remove files in a directory). */
export const WRITTEN_BY_OTHERS = 0o022;

/**
 * `is readable by other users (mode 0644)` when `mode` lets others read (of `bits`), else
 * `is writable by other users (mode 0622)` when it lets them write; undefined when neither.
 */
export function othersAccess(mode: number, bits: number = READ_BY_OTHERS | WRITTEN_BY_OTHERS): string | undefined {
  const how = (mode & bits & READ_BY_OTHERS) !== 0 ? 'readable' : (mode & bits & WRITTEN_BY_OTHERS) !== 0 ? 'writable' : undefined;
  return how === undefined ? undefined : `is ${how} by other users (mode ${(mode & 0o7777).toString(8).padStart(4, '0')})`;
}
