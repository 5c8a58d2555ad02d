import { RecordsRefusedError, UpstreamError } from '../errors.ts';

/**
 * Whether upstream refused a records read as more than it answers at once: a 400 to a list
 * request whose every parameter is known to be good (id order, a limit and offset in range, an id
 * filter; `fields` and `filter` are the caller's to get right), so what is left to refuse is the
 * records asked for. The emulator answers so when the expressions of a request take more than its
 * budget (docs/expressions.md, "Bounds"); a real upstream may for the size of the records, or the
 * time they take. Asking for fewer records is the way on.
 */
export function isRefusedPage(error: unknown): error is UpstreamError {
  return error instanceof UpstreamError && error.status === 400 && !(error instanceof RecordsRefusedError);
}

/** A records read upstream refused as too much at once, and how many the read asks for next. */
export interface RefusedPage {
  /** Records the refused request asked for. */
  asked: number;
  /** Records the read asks for instead (one record is read as two requests, see `iterateRecordPages`). */
  next: number;
  /** The refused page's offset; absent for a read by ids. */
  offset?: number;
  /** Upstream's message. */
  message: string;
}
