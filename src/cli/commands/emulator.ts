import { readFile } from 'node:fs/promises';
import { Command, InvalidArgumentError } from 'commander';
import { ConfigError, UsageError } from '../../errors.ts';
import { ADMIN_TOKEN_VARIABLE, API_KEYS_VARIABLE, emulatorSecrets } from '../emulator-secrets.ts';

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

function port(value: string): number {
  const n = Number(value);
  if (!/^[0-9]+$/.test(value) || n > 65535) throw new InvalidArgumentError('expected a port number 0-65535');
  return n;
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
    .option('--api-key-file <file>', `API keys, one a line as --api-key takes them (# comments); repeatable; or set ${API_KEYS_VARIABLE} (separated by whitespace): unlike flags, neither shows in the process list`, collect, [])
    .option('--admin-token <token>', 'enable the /_emulator/ admin surface with this bearer token')
    .option('--admin-token-file <file>', `the admin token, read from this file; or set ${ADMIN_TOKEN_VARIABLE}`)
    .option('--data <file>', 'persist state in this SQLite file (default: in memory)')
    .option('--seed <file>', 'load a workspace from this JSON file at start')
    .option('--log-requests', 'log every request as JSON')
    .action(async (opts: {
      host: string; port: number; workspaceId: string; apiKey: string[]; apiKeyFile: string[]; adminToken?: string; adminTokenFile?: string; data?: string;
      seed?: string; logRequests?: boolean;
    }) => {
      const { ApiKeyFlagError, buildServer, closeWithin, listen, parseApiKeyFlag } = await import('../../emulator/index.ts');
      const { keys, adminToken, warnings } = emulatorSecrets(opts, process.env);
      for (const warning of warnings) process.stderr.write(`wsmirror emulator: ${warning}\n`);
      // A key is named by its place, never by its value.
      const apiKeys = keys.map(({ flag, place }) => {
        try {
          return parseApiKeyFlag(flag);
        } catch (error) {
          if (error instanceof ApiKeyFlagError) throw new UsageError(`${place}: ${error.message}`);
          throw error;
        }
      });
      if (apiKeys.length === 0) {
        process.stderr.write(`wsmirror emulator: no --api-key given (nor --api-key-file, ${API_KEYS_VARIABLE}): every API request will be answered 401\n`);
      }
      const seed = opts.seed === undefined ? undefined : await readSeed(opts.seed);
      let app;
      try {
        app = await buildServer({
          workspaceId: opts.workspaceId,
          apiKeys,
          ...(adminToken === undefined ? {} : { adminToken }),
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
