import type { Command } from 'commander';
import { UsageError } from '../../errors.ts';
import type { OutboxStatus } from '../../mirror/index.ts';
import type { ListedEntry } from '../../sync/push/outbox-admin.ts';
import { withConfigOption, type ConfigFlags } from '../config-option.ts';
import { textTable, type TextColumn } from '../text-table.ts';

const STATUSES: readonly OutboxStatus[] = ['pending', 'failed', 'conflict'];

interface SelectionFlags extends ConfigFlags {
  table?: string[];
}

function collect(value: string, previous: string[] = []): string[] {
  return [...previous, ...value.split(',').map((s) => s.trim()).filter((s) => s !== '')];
}

function parseStatuses(values: readonly string[] | undefined): OutboxStatus[] | undefined {
  if (values === undefined || values.length === 0) return undefined;
  return values.map((v) => {
    const status = STATUSES.find((s) => s === v);
    if (status === undefined) throw new UsageError(`--status ${JSON.stringify(v)}: expected ${STATUSES.join(', ')}`);
    return status;
  });
}

function parseEntryIds(values: readonly string[]): number[] {
  return values.map((v) => {
    if (!/^[0-9]{1,15}$/.test(v)) throw new UsageError(`${JSON.stringify(v)} is not an outbox entry id (a number, as wsmirror outbox lists them)`);
    return Number(v);
  });
}

function showValue(value: unknown): string {
  if (value === undefined || value === null) return 'null';
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return text.length > 40 ? `${text.slice(0, 37)}...` : text;
}

/**
 * What an entry changes: `column: old → new`, `insert` (with the values it keeps, when it keeps
 * them: its row's table left the mirror, or its create was sent), `delete`.
 */
function describeChange(e: ListedEntry): string {
  if (e.operation === 'insert') return e.newValue === null ? 'insert' : `insert ${showValue(e.newValue)}`;
  if (e.operation === 'delete') return 'delete';
  return `${e.fieldName ?? e.columnName ?? '?'}: ${showValue(e.oldValue)} → ${showValue(e.newValue)}`;
}

const COLUMNS: readonly TextColumn<ListedEntry>[] = [
  { title: 'ID', right: true, value: (e) => String(e.entryId) },
  { title: 'TABLE', value: (e) => e.table },
  { title: 'RECORD', right: true, value: (e) => String(e.recordId) },
  { title: 'CHANGE', value: describeChange },
  { title: 'STATUS', value: (e) => e.status },
  { title: 'ATTEMPTS', right: true, value: (e) => String(e.attempts) },
  { title: 'NEXT ATTEMPT', value: (e) => (e.status === 'pending' ? (e.nextAttemptAt ?? 'next cycle') : '-') },
];

/** The row inserted here an entry waits for; a column only when an entry listed waits for one. */
const WAITS_FOR: TextColumn<ListedEntry> = { title: 'WAITS FOR', value: (e) => (e.waitsFor === null ? '' : `${e.waitsFor.table} ${e.waitsFor.recordId}`) };

const LAST_ERROR: TextColumn<ListedEntry> = { title: 'LAST ERROR', value: (e) => e.lastError ?? '' };

/** The plain-text listing: an aligned table, one line per entry. */
export function formatOutboxText(entries: readonly ListedEntry[]): string {
  if (entries.length === 0) return 'outbox: no entries\n';
  const waits = entries.some((e) => e.waitsFor !== null);
  return `${textTable([...COLUMNS, ...(waits ? [WAITS_FOR] : []), LAST_ERROR], entries).join('\n')}\n`;
}

async function openLocal(flags: ConfigFlags, writes = false) {
  const [{ openCommand }, { openConfiguredMirror }] = await Promise.all([
    import('../command-config.ts'),
    import('../../daemon/configured-mirror.ts'),
  ]);
  const { config, logger } = openCommand(flags, { upstream: 'optional', toStderr: true });
  return openConfiguredMirror(config, { logger, mustExist: true, ...(writes ? { migrate: true } : {}) });
}

export function defineOutboxCommand(program: Command): Command {
  const outbox = program
    .command('outbox')
    .description('list, retry or discard local edits waiting to be pushed upstream (pending, failed, conflict)');

  const list = withConfigOption(
    outbox
      .command('list', { isDefault: true })
      .description('list outbox entries: table, record, column, old → new, status, attempts, the row a pending one waits for, last error')
      .option('--status <status>', 'only these statuses (pending, failed, conflict; repeatable or comma-separated)', collect)
      .option('--table <module.table>', 'only this table: module.table or SQL name (repeatable or comma-separated)', collect)
      .option('--json', 'print the entries as one JSON document'),
  );
  list.action(async (flags: SelectionFlags & { status?: string[]; json?: boolean }) => {
    const statuses = parseStatuses(flags.status);
    const { listOutbox, outboxFilter } = await import('../../sync/push/outbox-admin.ts');
    const mirror = await openLocal(flags);
    try {
      const filter = { ...await outboxFilter(mirror, await mirror.readCatalog(), { tables: flags.table ?? [] }), ...(statuses ? { statuses } : {}) };
      const entries = await listOutbox(mirror, filter);
      process.stdout.write(flags.json ? `${JSON.stringify(entries, null, 2)}\n` : formatOutboxText(entries));
    } finally {
      await mirror.close();
    }
  });

  // `outbox` alone is `outbox list`, whose options commander's help shows only under `outbox list
  // --help`: the parent's help lists them too, formatted by the list command's own helper.
  outbox.addHelpText('after', () => {
    const help = list.createHelp();
    const options = help.visibleOptions(list).filter((option) => option.long !== '--help');
    const width = Math.max(...options.map((option) => help.optionTerm(option).length));
    const items = options.map((option) => help.formatItem(help.optionTerm(option), width, help.optionDescription(option), help));
    return `\n${help.formatItemList('wsmirror outbox alone runs wsmirror outbox list, with these options:', items, help).join('\n')}`;
  });

  withConfigOption(
    outbox
      .command('retry')
      .description('send failed and conflicting entries again at the next cycle (the local value wins)')
      .argument('[ids...]', 'entry ids, as wsmirror outbox lists them')
      .option('--table <module.table>', 'every failed or conflicting entry of this table: module.table or SQL name (repeatable)', collect),
  ).action(async (ids: string[], flags: SelectionFlags) => {
    const entryIds = parseEntryIds(ids);
    const { retryOutbox } = await import('../../sync/push/outbox-admin.ts');
    const mirror = await openLocal(flags, true);
    try {
      const { retried, deletedUpstream } = await retryOutbox(mirror, { entryIds, tables: flags.table ?? [] });
      const left = deletedUpstream.length === 0 ? ''
        : `; ${deletedUpstream.length} of records deleted upstream left as conflict (wsmirror outbox discard ${deletedUpstream.join(' ')})`;
      process.stdout.write(`outbox: ${retried} ${retried === 1 ? 'entry' : 'entries'} pending again${left}\n`);
    } finally {
      await mirror.close();
    }
  });

  withConfigOption(
    outbox
      .command('discard')
      .description("drop local edits and restore upstream's version of their records in the mirror")
      .argument('[ids...]', 'entry ids, as wsmirror outbox lists them')
      .option('--table <module.table>', 'every entry of this table: module.table or SQL name (repeatable)', collect),
  ).action(async (ids: string[], flags: SelectionFlags) => {
    const entryIds = parseEntryIds(ids);
    const [{ openCommand }, { withSyncCycle }, { discardOutbox }] = await Promise.all([
      import('../command-config.ts'),
      import('../../daemon/sync-cycle.ts'),
      import('../../sync/push/outbox-admin.ts'),
    ]);
    const { config, logger } = openCommand(flags, { toStderr: true });
    // Runs no cycle: it may go while the daemon runs.
    const done = await withSyncCycle(config, { logger, besideSync: true }, (cycle) =>
      discardOutbox(cycle.mirror, cycle.client, { entryIds, tables: flags.table ?? [] }));
    const removed = done.localRows === 0 ? '' : `, ${done.localRows} ${done.localRows === 1 ? 'row' : 'rows'} inserted locally removed`;
    process.stdout.write(`outbox: ${done.entries} ${done.entries === 1 ? 'entry' : 'entries'} discarded, ${done.records} ${done.records === 1 ? 'record' : 'records'} restored from upstream${removed}\n`);
  });
  return outbox;
}
