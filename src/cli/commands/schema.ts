import type { Command } from 'commander';
import { withConfigOption, type ConfigFlags } from '../config-option.ts';

/**
 * `wsmirror schema`: the mirror's data dictionary as Markdown, or with `--erd` a Mermaid ER
 * diagram (src/mirror/data-dictionary.ts). Reads only the mirror, like `status`.
 */
export function defineSchemaCommand(program: Command): Command {
  return withConfigOption(
    program
      .command('schema')
      .description("print the mirror's data dictionary as Markdown: every table and view, column, type, label and reference (reads only the mirror)")
      .option('--erd', 'print a Mermaid ER diagram of the tables and their references instead'),
  ).action(async (flags: ConfigFlags & { erd?: boolean }) => {
    const [{ openCommand }, { openConfiguredMirror }, dictionary] = await Promise.all([
      import('../command-config.ts'),
      import('../../daemon/configured-mirror.ts'),
      import('../../mirror/data-dictionary.ts'),
    ]);
    // stdout carries the document; logs go to stderr.
    const { config, logger } = openCommand(flags, { upstream: 'optional', toStderr: true });
    const mirror = await openConfiguredMirror(config, { logger, mustExist: true });
    try {
      const catalog = await mirror.readCatalog();
      process.stdout.write(flags.erd ? dictionary.entityRelationshipDiagram(catalog) : dictionary.dataDictionaryMarkdown(catalog));
    } finally {
      await mirror.close();
    }
  });
}
