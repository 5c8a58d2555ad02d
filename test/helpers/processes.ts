import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { workspaceBase, type EmulatorEndpoint } from './emulator.ts';

/** `./bin/wsmirror` of this checkout. */
export const WSMIRROR_BIN = resolve(import.meta.dirname, '../../bin/wsmirror');

export interface EmulatorProcess extends EmulatorEndpoint {
  child: ChildProcess;
  stop(): Promise<void>;
}

export interface SpawnEmulatorOptions {
  /** More flags of `wsmirror emulator` (`--seed`, `--data`, …). */
  args?: readonly string[];
  /** `pipe` (default) keeps the emulator's stderr for the error of a failed start; `inherit` shows it. */
  stderr?: 'pipe' | 'inherit';
}

/** Starts `wsmirror emulator` as a real process on a free port and waits for its ready line. */
export async function spawnEmulator(options: SpawnEmulatorOptions = {}): Promise<EmulatorProcess> {
  const apiKey = 'proc-key';
  const adminToken = 'proc-admin';
  const workspaceId = 'proc00000001';
  const child = spawn(
    process.execPath,
    [WSMIRROR_BIN, 'emulator', '--port', '0', '--api-key', apiKey, '--admin-token', adminToken, '--workspace-id', workspaceId, ...(options.args ?? [])],
    { stdio: ['ignore', 'pipe', options.stderr ?? 'pipe'] },
  );
  let listening = false;
  const url = await new Promise<string>((resolveUrl, reject) => {
    let out = '';
    let err = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      if (listening) return;
      out += chunk.toString();
      const m = /listening on (\S+)/.exec(out);
      if (m) {
        listening = true;
        resolveUrl(m[1]!);
      }
    });
    // Read to the end so the pipe never fills; keep only what precedes the ready line.
    child.stderr?.on('data', (chunk: Buffer) => {
      if (!listening) err += chunk.toString();
    });
    child.once('exit', (code) => reject(new Error(`the emulator exited with ${code} before listening${err === '' ? '' : `: ${err}`}`)));
  });
  return {
    url, child, apiKey, adminToken, workspaceId, base: workspaceBase(workspaceId),
    stop: () => stopProcess(child),
  };
}

export function stopProcess(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((done) => {
    child.once('exit', () => done());
    child.kill(signal);
  });
}

/** Where a daemon process finds its mirror: a SQLite URL, or a Postgres URL and schema. */
export interface MirrorLocation {
  url: string;
  pgSchema?: string | undefined;
}

export function mirrorEnv(mirror: MirrorLocation): Record<string, string> {
  return { WSMIRROR_MIRROR_URL: mirror.url, ...(mirror.pgSchema ? { WSMIRROR_PG_SCHEMA: mirror.pgSchema } : {}) };
}

/**
 * The environment of a `wsmirror` process pointed at an emulator and a mirror, with quiet logs
 * and no operations port; `extra` adds or overrides variables.
 */
export function daemonEnv(
  upstream: Pick<EmulatorEndpoint, 'url' | 'apiKey' | 'workspaceId'>,
  mirror: MirrorLocation,
  extra: Record<string, string> = {},
): Record<string, string> {
  return {
    WSMIRROR_BASE_URL: upstream.url,
    WSMIRROR_API_KEY: upstream.apiKey,
    WSMIRROR_WORKSPACE_ID: upstream.workspaceId,
    WSMIRROR_LOG_LEVEL: 'warn',
    WSMIRROR_HTTP_PORT: '0',
    ...mirrorEnv(mirror),
    ...extra,
  };
}

export interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** Peak resident set size seen in /proc while it ran (bytes), when readable. */
  peakRssBytes: number | undefined;
  /** CPU time (user + system) it had used at the last sample before it exited, in ms. */
  cpuMs: number | undefined;
}

/** CPU time (user + system) a live process has used so far, in ms; undefined once it is gone. */
export function processCpuMs(pid: number): number | undefined {
  try {
    // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return undefined;
  }
}

/** USER_HZ: 100 on every Linux this runs on. */
const CLOCK_TICKS_PER_SECOND = 100;

/** Busy and total CPU time of the whole machine so far (all cores), in clock ticks. */
export function machineCpuTicks(): { busy: number; total: number } {
  const [, ...values] = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).map(Number);
  const total = values.reduce((a, b) => a + b, 0);
  const idle = (values[3] ?? 0) + (values[4] ?? 0);
  return { busy: total - idle, total };
}

/** Resident set size of a live process now and at its peak (VmRSS, VmHWM), or undefined once it is gone. */
export function processMemory(pid: number): { rssBytes: number; peakRssBytes: number } | undefined {
  let status: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return undefined;
  }
  const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN) * 1024;
  const memory = { rssBytes: kb('VmRSS'), peakRssBytes: kb('VmHWM') };
  return Number.isNaN(memory.peakRssBytes) ? undefined : memory;
}

/** Peak RSS so far of a live process (VmHWM), or undefined once it is gone. */
export function peakRss(pid: number): number | undefined {
  return processMemory(pid)?.peakRssBytes;
}

/**
 * Runs `wsmirror <args>` to completion (or until `killAfterMs`, then SIGKILL), with only the
 * given environment on top of PATH and HOME. Samples the peak RSS while it runs.
 */
export function runWsmirror(
  args: string[],
  env: Record<string, string>,
  options: {
    killAfterMs?: number;
    /** Checked on every output chunk; true kills the process at once. */
    killWhen?: (stdout: string, stderr: string) => boolean;
    /** Receives a function that SIGKILLs the process (for kills decided later) and the process. */
    onSpawn?: (kill: () => void, child: ChildProcess) => void;
    cwd?: string;
    /**
     * Start through the launcher (bin/wsmirror as a shell script), as the systemd unit and the
     * Dockerfile do, with the Node options it adds; by default `node bin/wsmirror`, which skips them.
     */
    launcher?: boolean;
    /** Run as this user (tests run as root, whom file permissions do not stop). */
    user?: { uid: number; gid: number };
  } = {},
): Promise<RunResult> {
  const child = spawn(options.launcher ? WSMIRROR_BIN : process.execPath, options.launcher ? args : [WSMIRROR_BIN, ...args], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(options.cwd ? { cwd: options.cwd } : {}),
    ...(options.user ? { uid: options.user.uid, gid: options.user.gid } : {}),
  });
  let stdout = '';
  let stderr = '';
  let peak: number | undefined;
  const kill = () => child.kill('SIGKILL');
  options.onSpawn?.(kill, child);
  child.stdout!.on('data', (c: Buffer) => {
    stdout += c.toString();
    if (options.killWhen?.(stdout, stderr)) kill();
  });
  child.stderr!.on('data', (c: Buffer) => {
    stderr += c.toString();
    if (options.killWhen?.(stdout, stderr)) kill();
  });
  let cpu: number | undefined;
  const sampler = setInterval(() => {
    cpu = (child.pid === undefined ? undefined : processCpuMs(child.pid)) ?? cpu;
    const v = child.pid === undefined ? undefined : peakRss(child.pid);
    if (v !== undefined) peak = Math.max(peak ?? 0, v);
  }, 20);
  const timer = options.killAfterMs === undefined ? undefined : setTimeout(kill, options.killAfterMs);
  return new Promise((done) => {
    child.once('exit', (code, signal) => {
      clearInterval(sampler);
      if (timer) clearTimeout(timer);
      done({ code, signal, stdout, stderr, peakRssBytes: peak, cpuMs: cpu });
    });
  });
}

/** A `wsmirror` process left running (`run`), whose output a test watches as it comes. */
export interface LiveWsmirror {
  child: ChildProcess;
  /** Its output so far. */
  output(): { stdout: string; stderr: string };
  /** Resolves once `check` holds of the output; rejects after `timeoutMs` or when the process exits first. */
  waitFor(what: string, check: (stdout: string, stderr: string) => boolean, timeoutMs?: number): Promise<void>;
  /** Resolves when it exits (SIGKILLed after `killAfterMs`). */
  exited: Promise<RunResult>;
}

/** Starts `wsmirror <args>` as `runWsmirror` does, without waiting for its end. */
export function startWsmirror(args: string[], env: Record<string, string>, options: { killAfterMs?: number; cwd?: string } = {}): LiveWsmirror {
  let child!: ChildProcess;
  let stdout = '';
  let stderr = '';
  let ended: RunResult | undefined;
  const exited = runWsmirror(args, env, {
    ...options,
    onSpawn: (_kill, spawned) => {
      child = spawned;
      spawned.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
      spawned.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
    },
  }).then((result) => (ended = result));
  return {
    child,
    exited,
    output: () => ({ stdout, stderr }),
    async waitFor(what, check, timeoutMs = 30_000) {
      for (const started = Date.now(); !check(stdout, stderr); await new Promise((r) => setTimeout(r, 50))) {
        if (ended !== undefined) throw new Error(`exited (${ended.code ?? ended.signal}) before ${what}:\n${stdout}\n${stderr}`);
        if (Date.now() - started > timeoutMs) throw new Error(`no ${what} after ${timeoutMs} ms:\n${stdout}\n${stderr}`);
      }
    },
  };
}

/** How many lines of a JSON log have a `msg` matching `pattern`. */
export function countLogLines(stdout: string, pattern: RegExp): number {
  return stdout.split('\n').filter((line) => {
    // The last line may not be whole yet.
    if (!line.startsWith('{') || !line.endsWith('}')) return false;
    return pattern.test(String((JSON.parse(line) as { msg?: unknown }).msg ?? ''));
  }).length;
}
