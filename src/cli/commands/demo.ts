import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { InvalidArgumentError, type Command } from 'commander';
import { ConfigError, EXIT } from '../../errors.ts';
import { DEFAULT_DEMO_DB, DEMO_SCHEDULE, OWN_CHANGE_EVERY_MS } from '../demo/demo-settings.ts';

/** The sample workspace the demo serves; shipped with the package (`files` includes `config`). */
export const DEMO_SEED_FILE = fileURLToPath(new URL('../../../config/emulator-seed.example.json', import.meta.url));

interface DemoFlags {
  db: string;
  port: number;
  keepRunning?: boolean;
}

function port(value: string): number {
  const n = Number(value);
  if (!/^[0-9]+$/.test(value) || n > 65535) throw new InvalidArgumentError('expected a port number 0-65535');
  return n;
}

export function defineDemoCommand(program: Command): Command {
  return program
    .command('demo')
    .description('zero-configuration first run: an embedded emulator with a sample workspace, mirrored into a local SQLite file')
    .option('--db <file>', 'the SQLite mirror file (reused by later runs)', DEFAULT_DEMO_DB)
    .option('--port <port>', 'port of the embedded emulator on 127.0.0.1 (0 = any free port)', port, 0)
    .option('--keep-running', `keep the emulator up and pull its changes every ${DEMO_SCHEDULE} until Ctrl-C`)
    .action(async (flags: DemoFlags) => {
      const cwd = process.cwd();
      const dbPath = resolve(cwd, flags.db);
      const [
        emulator, { openMirror }, { resolveConfig }, { commandLogger }, { openSyncCycle }, { runSyncDaemon }, { Metrics },
        { checkExistingFile, readSeed, removeDemoFile }, { commandName, shownPath, walkthrough }, { startLiveChanges }, { cycleProblems },
      ] = await Promise.all([
        import('../../emulator/index.ts'),
        import('../../mirror/index.ts'),
        import('../../daemon/load-config.ts'),
        import('../command-config.ts'),
        import('../../daemon/sync-cycle.ts'),
        import('../../daemon/sync-daemon.ts'),
        import('../../daemon/metrics.ts'),
        import('../demo/demo-file.ts'),
        import('../demo/walkthrough.ts'),
        import('../demo/live-changes.ts'),
        import('../../sync/engine.ts'),
      ]);
      const seed = await readSeed(DEMO_SEED_FILE);
      const workspaceId = emulator.DEFAULT_WORKSPACE_ID;
      const existing = await checkExistingFile(dbPath, flags.db, workspaceId, openMirror);

      // A fresh key per run, for this local emulator only: printing it is safe and useful.
      const apiKey = `demo-${randomBytes(12).toString('hex')}`;
      const app = await emulator.buildServer({ workspaceId, apiKeys: [{ key: apiKey, grants: 'all' }], seed: seed.json });
      try {
        let url: string;
        try {
          url = await emulator.listen(app, { host: '127.0.0.1', port: flags.port });
        } catch (error) {
          throw new ConfigError(`--port ${flags.port}: the demo emulator cannot listen on 127.0.0.1: ${(error as Error).message}`, { cause: error });
        }
        // Only the log level is taken from the environment: WSMIRROR_MIRROR_URL or
        // WSMIRROR_BASE_URL meant for a real mirror must not redirect the demo.
        const level = process.env.WSMIRROR_LOG_LEVEL;
        const config = resolveConfig(
          {
            upstream: { baseUrl: url, apiKey, workspaceId },
            mirror: { url: `sqlite:${dbPath}` },
            // No lookback: the emulator is local and commits before it answers, so nothing arrives
            // late, and each change the demo prints is counted once.
            sync: { schedule: DEMO_SCHEDULE, lookback: '0s' },
            http: { port: 0 },
            log: { level: 'warn' },
          },
          { env: level === undefined ? {} : { WSMIRROR_LOG_LEVEL: level }, cwd, source: 'wsmirror demo' },
        );
        // Logs go to stderr: stdout is the walkthrough.
        const logger = commandLogger(config, { toStderr: true });
        if (existing === 'earlier-demo') removeDemoFile(dbPath);
        const metrics = new Metrics();
        const cycle = await openSyncCycle(config, { logger, metrics, demo: true });
        try {
          const report = await cycle.run({ forceFullScan: true });
          const problems = cycleProblems(report);
          if (problems.length > 0) {
            for (const problem of problems) process.stderr.write(`wsmirror demo: ${problem}\n`);
            process.exitCode = EXIT.syncFailed;
            return;
          }
          const shown = shownPath(dbPath, cwd);
          const { text, example } = await walkthrough(cycle.mirror, {
            seedName: seed.name,
            file: shown,
            self: commandName(cwd),
            emulator: flags.keepRunning ? { url, apiKey, workspaceId } : undefined,
          });
          process.stdout.write(text);
          if (!flags.keepRunning) return;
          const write = (line: string) => void process.stdout.write(line);
          const live = example === undefined
            ? undefined
            : startLiveChanges({ upstream: { url, apiKey, workspaceId }, example, mirror: cycle.mirror, write, intervalMs: OWN_CHANGE_EVERY_MS });
          try {
            await runSyncDaemon(config, {
              logger,
              cycle: { cycle, metrics },
              runOnStart: false,
              onCycle: (done) => live?.cycleDone(done),
              onStopped: (message) => write(`\nwsmirror demo: ${message}. The mirror stays in ${shown}; the emulator and its changes are gone.\n`),
            });
          } finally {
            live?.stop();
          }
        } finally {
          await cycle.close();
        }
      } finally {
        await app.close();
      }
    });
}
