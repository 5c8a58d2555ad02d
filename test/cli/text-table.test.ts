import { expect, it } from 'vitest';
import { textTable } from '../../src/cli/text-table.ts';

/** The plain-text tables of `wsmirror status` and `wsmirror outbox`: one line per row, whatever the cells hold. */
it('keeps each row on one line: line breaks, tabs and other control characters in a cell are shown escaped', () => {
  const rows = [{ change: 'notes: "a" → two\nlines', error: 'tab\there\r\u0007' }, { change: 'plain', error: '' }];
  const lines = textTable([{ title: 'CHANGE', value: (r: typeof rows[number]) => r.change }, { title: 'ERROR', value: (r) => r.error }], rows);
  expect(lines).toEqual([
    `${'CHANGE'.padEnd('notes: "a" → two\\nlines'.length)}  ERROR`,
    'notes: "a" → two\\nlines  tab\\there\\r\\u0007',
    'plain',
  ]);
});
