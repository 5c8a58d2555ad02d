import { readFile } from 'node:fs/promises';
import { Command, InvalidArgumentError } from 'commander';
import { ConfigError, UsageError } from '../../errors.ts';

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

function port(value: string): number {
  const n = Number(value);
  if (!/^[0-9]+$/.test(value) || n > 65535) throw new InvalidArgumentError('expected a port number 0-65535');
  return n;
}

function ordinal(n: number): string {
  const tens = n % 100;
  const suffix = tens >= 11 && tens <= 13 ? 'th' : (['th', 'st', 'nd', 'rd'][n % 10] ?? 'th');
  return `${n}${suffix}`;
}

async function readSeed(file: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new ConfigError(`--seed ${file}: cannot read the file (${(error as NodeJS.ErrnoException).code ?? error})`);
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new ConfigError(`--seed ${file}: not valid JSON (${(error as Error).message})`);
  }
}

/**
 * How long a stop waits for the requests in flight to be answered before it cuts their
 * connections: the longest a daemon's request waits for an answer is far longer, but a stop must
 * end well within a supervisor's own bound (Docker's is 10 s).
 */
const STOP_GRACE_MS = 5_000;

export function defineEmulatorCommand(program: Command): Command {
  return program
    .command('emulator')
    .description('serve the upstream workspace API from a stateful emulator')
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--port <port>', 'port to listen on (0 = any free port)', port, 8787)
    .option('--workspace-id <id>', 'the 12-character workspace id', 'demo00000001')
    .option('--api-key <key>', 'an API key: KEY (every grant) or KEY=grant1,grant2 (exactly those; KEY= or KEY=none for none, KEY=all); grants follow the last "=" (KEY==all for a KEY ending in "="); repeatable', collect, [])
    .option('--admin-token <token>', 'enable the /_emulator/ admin surface with this bearer token')
    .option('--data <file>', 'persist state in this SQLite file (default: in memory)')
    .option('--seed <file>', 'load a workspace from this JSON file at start')
    .option('--log-requests', 'log every request as JSON')
    .action(async (opts: {
      host: string; port: number; workspaceId: string; apiKey: string[]; adminToken?: string; data?: string;
      seed?: string; logRequests?: boolean;
    }) => {
      const { ApiKeyFlagError, buildServer, closeWithin, listen, parseApiKeyFlag } = await import('../../emulator/index.ts');
      // The flag is named by its place, never by its value: that holds the key.
      const apiKeys = opts.apiKey.map((flag, i) => {
        try {
          return parseApiKeyFlag(flag);
        } catch (error) {
          if (error instanceof ApiKeyFlagError) throw new UsageError(`--api-key (the ${ordinal(i + 1)}): ${error.message}`);
          throw error;
        }
      });
      if (opts.apiKey.length === 0) {
        process.stderr.write('wsmirror emulator: no --api-key given: every API request will be answered 401\n');
      }
      const seed = opts.seed === undefined ? undefined : await readSeed(opts.seed);
      let app;
      try {
        app = await buildServer({
          workspaceId: opts.workspaceId,
          apiKeys,
          ...(opts.adminToken === undefined ? {} : { adminToken: opts.adminToken }),
          ...(opts.data === undefined ? {} : { dataFile: opts.data }),
          ...(seed === undefined ? {} : { seed }),
          logRequests: opts.logRequests === true,
        });
      } catch (error) {
        throw new ConfigError((error as Error).message, { cause: error });
      }
      const url = await listen(app, { host: opts.host, port: opts.port });
      process.stdout.write(`listening on ${url}\n`);
      await new Promise<void>((resolve) => {
        const stop = () => {
          void closeWithin(app, STOP_GRACE_MS).then(() => resolve());
        };
        process.once('SIGTERM', stop);
        process.once('SIGINT', stop);
      });
    });
}
