import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

/** `./bin/wsmirror` of this checkout. */
export const WSMIRROR_BIN = resolve(import.meta.dirname, '../../bin/wsmirror');

export interface EmulatorProcess {
  url: string;
  child: ChildProcess;
  apiKey: string;
  adminToken: string;
  workspaceId: string;
  stop(): Promise<void>;
}

/** Starts `wsmirror emulator` as a real process on a free port and waits for its ready line. */
export async function spawnEmulator(extraArgs: string[] = []): Promise<EmulatorProcess> {
  const apiKey = 'proc-key';
  const adminToken = 'proc-admin';
  const workspaceId = 'proc00000001';
  const child = spawn(
    process.execPath,
    [WSMIRROR_BIN, 'emulator', '--port', '0', '--api-key', apiKey, '--admin-token', adminToken, '--workspace-id', workspaceId, ...extraArgs],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const url = await new Promise<string>((resolveUrl, reject) => {
    let out = '';
    let err = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const m = /listening on (\S+)/.exec(out);
      if (m) resolveUrl(m[1]!);
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      err += chunk.toString();
    });
    child.once('exit', (code) => reject(new Error(`the emulator exited with ${code} before listening: ${err}`)));
  });
  return {
    url, child, apiKey, adminToken, workspaceId,
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

export interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** Peak resident set size seen in /proc while it ran (bytes), when readable. */
  peakRssBytes: number | undefined;
}

/** Peak RSS so far of a live process (VmHWM), or undefined once it is gone. */
export function peakRss(pid: number): number | undefined {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
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
    /** Receives a function that SIGKILLs the process, for kills decided later. */
    onSpawn?: (kill: () => void) => void;
    cwd?: string;
  } = {},
): Promise<RunResult> {
  const child = spawn(process.execPath, [WSMIRROR_BIN, ...args], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(options.cwd ? { cwd: options.cwd } : {}),
  });
  let stdout = '';
  let stderr = '';
  let peak: number | undefined;
  const kill = () => child.kill('SIGKILL');
  options.onSpawn?.(kill);
  child.stdout!.on('data', (c: Buffer) => {
    stdout += c.toString();
    if (options.killWhen?.(stdout, stderr)) kill();
  });
  child.stderr!.on('data', (c: Buffer) => {
    stderr += c.toString();
    if (options.killWhen?.(stdout, stderr)) kill();
  });
  const sampler = setInterval(() => {
    const v = child.pid === undefined ? undefined : peakRss(child.pid);
    if (v !== undefined) peak = Math.max(peak ?? 0, v);
  }, 20);
  const timer = options.killAfterMs === undefined ? undefined : setTimeout(kill, options.killAfterMs);
  return new Promise((done) => {
    child.once('exit', (code, signal) => {
      clearInterval(sampler);
      if (timer) clearTimeout(timer);
      done({ code, signal, stdout, stderr, peakRssBytes: peak });
    });
  });
}
