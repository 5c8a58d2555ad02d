import type { Command } from 'commander';
import { EXIT, UsageError } from '../../errors.ts';
import { withConfigOption, type ConfigFlags } from '../config-option.ts';

interface ImportFlags extends ConfigFlags {
  header?: boolean;
  delimiter?: string;
  quoteChar?: string;
  encoding?: string;
  mode?: string;
  numberFormat?: string;
  batchSize?: string;
  mappings?: string;
  json?: boolean;
}

/** Form part of each flag, to name the flag when its value is refused. */
const FLAG_OF_PART: Record<string, string> = {
  hasHeader: '--no-header', delimiter: '--delimiter', quoteChar: '--quote-char', encoding: '--encoding',
  importMode: '--mode', numberFormat: '--number-format', batchSize: '--batch-size', mappings: '--mappings',
};

export function defineImportCommand(program: Command): Command {
  return withConfigOption(
    program
      .command('import')
      .description('upload a CSV file into an upstream table through the API\'s import endpoint; the next sync brings the rows into the mirror')
      .argument('<table>', 'the table, as module.table')
      .argument('<file>', 'the CSV file (at most 50 MiB)')
      .option('--no-header', 'the file has no header row: columns map to the writable fields by position')
      .option('--delimiter <char>', 'field delimiter (default: detected among , ; tab |; \\t for tab)')
      .option('--quote-char <char>', 'quote character (default ")')
      .option('--encoding <name>', 'utf8 (default), utf16le or latin1')
      .option('--mode <mode>', 'append (default), update or upsert; update and upsert need key mappings')
      .option('--number-format <format>', 'us (default: 1,234.5) or eu (1.234,5)')
      .option('--batch-size <n>', 'rows per batch upstream (default 100)')
      .option('--mappings <json>', 'JSON array of { csvColumnName, fieldName, updatePolicy } (updatePolicy key, overwrite or ignoreEmpty)')
      .option('--json', 'print the result as JSON on stdout'),
  ).action(async (tableArg: string, file: string, flags: ImportFlags) => {
    const [
      { csvImportOptionsSchema, describeIssues }, { openCommand }, { createProgress }, { createWorkspaceClient },
      { withSettingHint }, { isHuman },
    ] = await Promise.all([
      import('../../api/index.ts'),
      import('../command-config.ts'),
      import('../../daemon/progress.ts'),
      import('../../daemon/upstream-client.ts'),
      import('../../daemon/setting-hints.ts'),
      import('../../daemon/terminal.ts'),
    ]);
    const table = /^([a-z0-9_]+)\.([a-z0-9_]+)$/.exec(tableArg);
    if (!table) throw new UsageError(`TABLE must be module.table (names of a-z, 0-9 and _), got ${JSON.stringify(tableArg)}`);
    const parts = Object.fromEntries(Object.entries({
      hasHeader: flags.header === false ? 'false' : undefined,
      delimiter: flags.delimiter,
      quoteChar: flags.quoteChar,
      encoding: flags.encoding,
      importMode: flags.mode,
      numberFormat: flags.numberFormat,
      batchSize: flags.batchSize,
      mappings: flags.mappings,
    }).filter(([, v]) => v !== undefined));
    const parsed = csvImportOptionsSchema.safeParse(parts);
    if (!parsed.success) {
      const part = (i: { path: PropertyKey[] }) => String(i.path[0] ?? '');
      throw new UsageError(parsed.error.issues
        .map((i) => describeIssues([{ ...i, path: i.path.slice(1) }], FLAG_OF_PART[part(i)] ?? part(i)))
        .join('; '));
    }
    // Only what was given is sent: the upstream applies its own defaults to the rest.
    const options = Object.fromEntries(Object.entries(parsed.data).filter(([name]) => Object.hasOwn(parts, name)));

    const { config, logger } = openCommand(flags, { toStderr: flags.json === true });
    const client = createWorkspaceClient(config, { logger });
    const progress = createProgress({
      label: 'import', unit: 'bytes', logger, logIntervalMs: config.log.progressIntervalMs, tty: isHuman(config.log.format, process.stderr),
    });
    const task = progress.task(tableArg);
    let reported = 0;
    try {
      const result = await client.importCsv(table[1]!, table[2]!, file, options, {
        onProgress: (sent, total) => {
          task.setTotal(total);
          task.add(sent - reported);
          reported = sent;
        },
      });
      task.done();
      process.stdout.write(flags.json
        ? `${JSON.stringify(result)}\n`
        : `${tableArg}: ${result.rowsImported} created, ${result.rowsUpdated} updated, ${result.rowsSkipped} skipped\n`);
      process.exitCode = EXIT.ok;
    } catch (error) {
      throw withSettingHint(error, config.upstream);
    } finally {
      progress.close();
      await client.close();
    }
  });
}
