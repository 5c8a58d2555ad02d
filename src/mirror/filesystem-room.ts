/** Room on the filesystem holding a mirror (`Mirror.filesystemRoom`), in bytes. */
export interface FilesystemRoom {
  /** The directory holding the mirror. */
  path: string;
  /** Free for an unprivileged writer (statfs: available blocks). */
  freeBytes: number;
  totalBytes: number;
  /** The mirror's own size: the file and its -wal. */
  mirrorBytes: number;
}
