import type { CsvNumberFormat } from '../../api/index.ts';
import { BadRequestError } from '../errors.ts';

/**
 * Picks the delimiter of a CSV file from its first lines when the request names none. The
 * candidates are comma, semicolon, tab and pipe. For each, the sample's lines (a line break inside
 * quotes does not end one) are split outside quotes; a candidate that gives every line the same
 * number of cells, more than one, is consistent. The consistent candidate giving the most cells
 * wins; ties go by preference: comma, semicolon, tab, pipe, except with the European number
 * format, whose decimal comma makes semicolon the first choice. When no candidate is consistent,
 * the one found most often in the first line wins; a file with none of them is one column
 * (comma). The quote character is no candidate; when it is one of the four and the file has
 * none of the others, it is almost surely the file's delimiter given as the quote: 400.
 */

const SAMPLE_LINES = 50;

function preference(numberFormat: CsvNumberFormat): string[] {
  return numberFormat === 'eu' ? [';', '\t', '|', ','] : [',', ';', '\t', '|'];
}

/** Counts of each candidate outside quotes, per line of the sample (the last, partial line dropped unless `complete`). */
function countPerLine(sample: string, candidates: readonly string[], quote: string, complete: boolean): number[][] {
  const lines: number[][] = [];
  let counts = candidates.map(() => 0);
  let quoted = false;
  let lineHasText = false;
  for (let i = 0; i < sample.length && lines.length < SAMPLE_LINES; i++) {
    const ch = sample[i]!;
    if (ch === quote) {
      quoted = !quoted; // a doubled quote flips twice: still inside
      lineHasText = true;
      continue;
    }
    if (quoted) continue;
    if (ch === '\n' || ch === '\r') {
      if (ch === '\r' && sample[i + 1] === '\n') i++;
      if (lineHasText) lines.push(counts);
      counts = candidates.map(() => 0);
      lineHasText = false;
      continue;
    }
    lineHasText = true;
    const at = candidates.indexOf(ch);
    if (at >= 0) counts[at]!++;
  }
  if (complete && lineHasText && lines.length < SAMPLE_LINES) lines.push(counts);
  return lines;
}

/** The delimiter of a file whose text starts with `sample`; `complete` when the sample is the whole file. */
export function detectDelimiter(sample: string, quote: string, numberFormat: CsvNumberFormat, complete: boolean): string {
  const candidates = preference(numberFormat).filter((c) => c !== quote);
  const lines = countPerLine(sample, candidates, quote, complete);
  if (lines.length === 0) return candidates[0]!;
  let best: { at: number; count: number } | undefined;
  candidates.forEach((_c, at) => {
    const first = lines[0]![at]!;
    if (first === 0 || !lines.every((l) => l[at] === first)) return;
    if (!best || first > best.count) best = { at, count: first };
  });
  if (best) return candidates[best.at]!;
  let most = 0;
  candidates.forEach((_c, at) => {
    if (lines[0]![at]! > lines[0]![most]!) most = at;
  });
  if (lines[0]![most] === 0 && candidates.length < preference(numberFormat).length) {
    throw new BadRequestError(
      `form.quoteChar: ${JSON.stringify(quote)} is one of the delimiters detection looks for, and the file has none of the others: ` +
        'the quote character must not be the delimiter; send the delimiter part, or another quoteChar',
    );
  }
  return candidates[most]!;
}
