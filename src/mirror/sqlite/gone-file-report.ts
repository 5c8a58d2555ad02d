import { statSync } from 'node:fs';
import type { OpenFileLocation } from './open-file-location.ts';

/**
 * What wsmirror says when its SQLite mirror file, or the file's -wal, is no longer at its path
 * while it has them open: where what was committed went, and what to do.
 */

/** What writing the connection's -wal back into the mirror file it has open came to. */
export interface WriteBack {
  /** Every committed write is in the file, and the -wal holds none. */
  readonly complete: boolean;
  /** SQLite's message, when the write-back failed. */
  readonly error?: string;
}

export interface GoneFile {
  /** The mirror path as wsmirror opened it. */
  readonly path: string;
  /** The -wal file SQLite opened beside the file. */
  readonly wal: string;
  readonly writeBack: WriteBack;
  /** Entries of the file's outbox (local edits not pushed yet); undefined when they could not be counted. */
  readonly waitingEdits: number | undefined;
}

/** The mirror file itself moved, deleted or replaced; `location` is where the open file is now. */
export function mirrorFileGone(gone: GoneFile, location: OpenFileLocation | undefined): string {
  const { path, wal, writeBack } = gone;
  const edits = waitingEdits(gone.waitingEdits);
  if (location !== undefined && 'at' in location) {
    const head = `the mirror file ${path} was moved to ${location.at} while wsmirror had it open: nothing more is written to it`;
    if (holdsFrames(`${location.at}-wal`)) {
      // Another connection opened the file at its new place, without the -wal left at the old
      // path, and wrote: its own -wal holds pages made from the file as it was before the move,
      // and SQLite writes them over what wsmirror wrote back.
      return `${head}. Something has opened and written ${location.at} at its new place since the move (${location.at}-wal is there): `
        + `it did so without what wsmirror's -wal held, so what was committed before the move${edits === '' ? '' : ` (its ${edits} among it)`} `
        + `may be lost once SQLite applies that -wal. Stop every client of ${location.at}, keep a copy of it and of ${location.at}-wal, `
        + 'and check the rows edited before the move and _wsmirror_outbox when it is opened again. Stop wsmirror before moving its file';
    }
    if (writeBack.complete) {
      return `${head}. Everything committed to it is in ${location.at}${edits === '' ? '' : `, its ${edits} included`} `
        + `(wsmirror wrote what the -wal held into it). To go on with that file, point mirror.url at it (sqlite:${location.at}), `
        + `or move it back to ${path} while wsmirror is stopped; started again as it is, wsmirror creates a new mirror at ${path}`;
    }
    return `${head}. ${notWrittenBack(writeBack)}: the rest of what was committed to it${edits === '' ? '' : ` (of its ${edits})`} is still in ${wal}, `
      + `which SQLite reads only beside the file. Move the file back to ${path} before anything opens that path, then start wsmirror `
      + '(started before, it would create a new mirror there, and SQLite would discard that -wal)';
  }
  if (location !== undefined) {
    return `the mirror file ${path} was deleted or replaced while wsmirror had it open: nothing more is written to it`
      + `${edits === '' ? '' : `; with it went its ${edits}`}; `
      + 'start wsmirror again to create the mirror there anew, or to open the file now in its place';
  }
  return `the mirror file ${path} was deleted, moved or replaced while wsmirror had it open: nothing more is written to it. `
    + (writeBack.complete
      ? 'What was committed to it is in that file (wsmirror wrote what the -wal held into it)'
      : `${notWrittenBack(writeBack)}: the rest of what was committed to it is in ${wal}`)
    + `${edits === '' ? '' : `, its ${edits} included`}: if it was moved, point mirror.url at it where it is now; `
    + 'start wsmirror again to create the mirror there anew, or to open the file now in its place';
}

/** The -wal file deleted or replaced while the mirror file stayed in place. */
export function walFileGone(gone: GoneFile): string {
  const { path, wal, writeBack } = gone;
  const edits = waitingEdits(gone.waitingEdits);
  const head = `the -wal file ${wal} of the mirror ${path} was deleted or replaced while wsmirror had it open: SQLite keeps there `
    + 'what is committed and not yet in the mirror file, so connections that open the mirror now fail ("disk I/O error")';
  const outcome = writeBack.complete
    ? `wsmirror wrote what its -wal held into ${path}: every committed write is in the file${edits === '' ? '' : `, its ${edits} included`}`
    : `${notWrittenBack(writeBack)}: the rest of what it held is lost when wsmirror stops`;
  return `${head}. ${outcome}. wsmirror stops: start it again, and reopen the other connections to the mirror`;
}

function notWrittenBack(writeBack: WriteBack): string {
  return writeBack.error === undefined
    ? 'A connection reading the mirror kept wsmirror from writing all of its -wal back into the file'
    : `Writing its -wal back into the file failed (${writeBack.error})`;
}

function waitingEdits(count: number | undefined): string {
  if (count === undefined || count === 0) return '';
  return `${count} local ${count === 1 ? 'edit' : 'edits'} not yet pushed`;
}

/** Whether a -wal file is there and holds frames (written since it was last checkpointed). */
function holdsFrames(wal: string): boolean {
  try {
    return statSync(wal).size > 0;
  } catch {
    return false;
  }
}
