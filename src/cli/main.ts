import { Command, CommanderError } from 'commander';
import { redactUrlPasswords } from '../api/secret-redaction.ts';
import { ConfigError, EXIT, UsageError } from '../errors.ts';
import { defineCheckCommand } from './commands/check.ts';
import { defineConformanceCommand } from './commands/conformance.ts';
import { defineDemoCommand } from './commands/demo.ts';
import { defineEmulatorCommand } from './commands/emulator.ts';
import { defineImportCommand } from './commands/import.ts';
import { defineOpenApiCommand } from './commands/openapi.ts';
import { defineOutboxCommand } from './commands/outbox.ts';
import { defineResyncCommand } from './commands/resync.ts';
import { defineRunCommand } from './commands/run.ts';
import { defineSchemaCommand } from './commands/schema.ts';
import { defineStatusCommand } from './commands/status.ts';
import { defineSyncCommand } from './commands/sync.ts';
import { printable } from './printable.ts';

/** Builds the command tree. Each command module loads its heavy dependencies only when it runs. */
export function buildProgram(): Command {
  const program = new Command('wsmirror')
    .description('Keep a live SQL mirror of a workspace, push local edits back, or serve an emulator of its API.')
    .version(process.env.npm_package_version ?? '0.1.0')
    .showHelpAfterError()
    .exitOverride();
  for (const define of [
    defineEmulatorCommand, defineSyncCommand, defineRunCommand, defineStatusCommand, defineCheckCommand, defineResyncCommand,
    defineOutboxCommand, defineSchemaCommand, defineDemoCommand, defineOpenApiCommand, defineImportCommand, defineConformanceCommand,
  ]) {
    define(program).exitOverride();
  }
  return program;
}

/** Runs the command line and returns the process exit code (DESIGN §2). */
export async function main(argv: string[]): Promise<number> {
  endQuietlyOnClosedPipe();
  const program = buildProgram();
  try {
    await program.parseAsync(argv, { from: 'user' });
    return typeof process.exitCode === 'number' ? process.exitCode : EXIT.ok;
  } catch (error) {
    if (error instanceof CommanderError) {
      // --help and --version end with a zero exit code; everything else is a usage error.
      return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    // A password in a URL the message quotes (upstream.baseUrl, mirror.url) is never printed,
    // and an upstream's message never drives the terminal.
    const text = printable(redactUrlPasswords(error instanceof Error ? error.message : String(error)), { keepLines: true });
    if (error instanceof UsageError) {
      process.stderr.write(`wsmirror: ${text}\n`);
      return EXIT.usage;
    }
    if (error instanceof ConfigError) {
      process.stderr.write(`wsmirror: configuration error: ${text}\n`);
      return EXIT.config;
    }
    process.stderr.write(`wsmirror: ${text}\n`);
    return EXIT.syncFailed;
  }
}

/**
 * `wsmirror openapi | head`: once the reader has what it wants and closes the pipe, the rest of
 * the output has nowhere to go. That is no failure of wsmirror's: end at once, without a stack.
 */
function endQuietlyOnClosedPipe(): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EPIPE') process.exit(EXIT.ok);
      throw error;
    });
  }
}
