import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/daemon/logger.ts';
import { resolveConfig } from '../../src/daemon/load-config.ts';
import { startDaemon } from '../../src/daemon/daemon.ts';
import { freePort } from '../helpers/free-port.ts';
import { sampleValue } from './metrics-text.ts';

async function until(condition: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(10);
  }
}

describe('startDaemon', () => {
  it('cycles, feeds metrics and readiness, recovers from failures, and stops cleanly', async () => {
    const port = await freePort();
    const config = resolveConfig(
      {
        upstream: { baseUrl: 'http://127.0.0.1:1', workspaceId: 'demo00000001', apiKey: 'daemon-test-key-01' },
        sync: { schedule: '40ms', maxLag: '1m' },
        http: { host: '127.0.0.1', port },
      },
      { env: {} },
    );
    const lines: Record<string, unknown>[] = [];
    const logger = createLogger({ level: 'debug', destination: { write: (l: string) => void lines.push(JSON.parse(l)) } });
    let failing = false;
    const daemon = await startDaemon({
      config,
      logger,
      handleSignals: false,
      cycle: async () => {
        if (failing) throw new Error('upstream answered 503');
        daemon.metrics.setTableCurrentAsOf('crm.orders', Date.now());
        daemon.metrics.observeRowsApplied('crm.orders', 'upsert', 1);
      },
    });
    expect(daemon.http?.url).toBe(`http://127.0.0.1:${port}`);
    const readyz = async () => (await fetch(`http://127.0.0.1:${port}/readyz`)).status;

    await until(async () => (await readyz()) === 200);
    failing = true;
    await until(async () => (await readyz()) === 503);
    const body = (await (await fetch(`http://127.0.0.1:${port}/readyz`)).json()) as { reason: string };
    expect(body.reason).toBe('the last cycle failed: upstream answered 503');
    failing = false;
    await until(() => lines.some((l) => l.msg === 'sync cycle succeeded again'));
    await until(async () => (await readyz()) === 200);

    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    expect(sampleValue(metrics, 'wsmirror_cycles_total', { result: 'success' })).toBeGreaterThanOrEqual(2);
    expect(sampleValue(metrics, 'wsmirror_cycles_total', { result: 'failure' })).toBeGreaterThanOrEqual(1);
    expect(sampleValue(metrics, 'wsmirror_rows_applied_total', { table: 'crm.orders', operation: 'upsert' })).toBeGreaterThanOrEqual(2);
    // One line per failing cycle, the reason in it, the stack only at debug.
    const failed = lines.find((l) => l.msg === 'sync cycle failed: upstream answered 503');
    expect(failed).toMatchObject({ level: 'error', error: 'upstream answered 503' });
    expect(JSON.stringify(failed)).not.toContain('    at ');

    await daemon.stop();
    await daemon.stopped;
    expect(lines.at(-1)).toMatchObject({ msg: 'stopped' });
    await expect(fetch(`http://127.0.0.1:${port}/healthz`)).rejects.toThrow();
    const cycles = daemon.scheduler.cycleCount;
    await sleep(100);
    expect(daemon.scheduler.cycleCount).toBe(cycles);
  });
});

describe('signals (a real process)', () => {
  const fixture = fileURLToPath(new URL('./fixtures/run-daemon.ts', import.meta.url));

  function runFixture(cycleMs: number) {
    const child = spawn(process.execPath, [fixture], { env: { ...process.env, CYCLE_MS: String(cycleMs) } });
    const messages: string[] = [];
    let buffer = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      buffer += chunk;
      let newline: number;
      while ((newline = buffer.indexOf('\n')) >= 0) {
        messages.push(String((JSON.parse(buffer.slice(0, newline)) as { msg: string }).msg));
        buffer = buffer.slice(newline + 1);
      }
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => void (stderr += chunk));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.on('exit', (code, signal) => resolve({ code, signal })),
    );
    return { child, messages, exited, stderr: () => stderr };
  }

  it('SIGTERM lets the running cycle finish, then the process exits 0 on its own', async () => {
    const run = runFixture(400);
    await until(() => run.messages.includes('cycle begin'));
    run.child.kill('SIGTERM');
    const { code, signal } = await run.exited;
    expect(run.stderr()).toBe('');
    expect({ code, signal }).toEqual({ code: 0, signal: null });
    const tail = run.messages.slice(run.messages.lastIndexOf('cycle begin'));
    expect(tail).toEqual([
      'cycle begin',
      'stopping: letting the running cycle finish (signal again to force)',
      'cycle commit',
      'stopped',
      'exiting',
    ]);
  });

  it('a second signal exits at once with 128 + the signal number', async () => {
    const run = runFixture(5_000);
    await until(() => run.messages.includes('cycle begin'));
    run.child.kill('SIGINT');
    await until(() => run.messages.some((m) => m.startsWith('stopping')));
    run.child.kill('SIGINT');
    const { code } = await run.exited;
    expect(code).toBe(130);
    expect(run.messages).not.toContain('cycle commit');
  });
});
