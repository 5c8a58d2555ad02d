import { isRefusedPage, RecordsRefusedError, type RefusedPage } from '../client/index.ts';
import { WsmirrorError } from '../errors.ts';
import type { SyncLogger } from './observer.ts';

/**
 * Pages of records upstream refuses as too much at once (client/refused-page.ts): the reads ask
 * for fewer records and go on, which the log tells; a record refused even alone fails its table's
 * pull, saying that no setting helps.
 */

/** Logs a refused page of `table` and the smaller page read instead. */
export function logRefusedPage(logger: SyncLogger, table: string): (refused: RefusedPage) => void {
  return (refused) => logger.info({ table, ...refused }, 'upstream refused a page of records as too much at once; reading fewer at a time');
}

/** The estimate of a table's records, or null when upstream refuses to list them for it: the pull says why. */
export async function estimateOrNull(estimate: Promise<number | null>): Promise<number | null> {
  try {
    return await estimate;
  } catch (error) {
    if (isRefusedPage(error) || error instanceof RecordsRefusedError) return null;
    throw error;
  }
}

/** A pull's failure, with what a record refused even alone means for the settings. */
export function explainRefusedRecords(error: unknown, pageSize: number): unknown {
  if (!(error instanceof RecordsRefusedError)) return error;
  return new WsmirrorError(error.code, `${error.message}; the pull reads fewer records at a time when upstream refuses a page, `
    + `from sync.pageSize (${pageSize}) down to one, so no setting helps: make the record cheaper for upstream to list `
    + '(its function fields, the size of its values), or leave the table out of the mirror (tables.exclude)', { cause: error });
}
