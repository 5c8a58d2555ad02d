import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../helpers/emulator.ts';
import { WSMIRROR_BIN, daemonEnv, runWsmirror } from '../helpers/processes.ts';
import { UpstreamWorkspace } from '../helpers/workspace.ts';

/**
 * What a person sees on a terminal (a pseudo-terminal made by util-linux `script`): readable log
 * lines, a progress bar per table being scanned, a one-line summary per cycle. Off a terminal, or
 * with --log-format json, JSON lines as before.
 */
const ROWS = 20_000;

/** Runs `wsmirror ARGS` on a pseudo-terminal; returns everything the terminal received. */
function onTerminal(args: string[], env: Record<string, string>, cwd: string): Promise<{ code: number | null; output: string }> {
  const command = [process.execPath, WSMIRROR_BIN, ...args].map((word) => `'${word}'`).join(' ');
  const child = spawn('script', ['-qfec', command, '/dev/null'], {
    cwd,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', TERM: 'xterm', COLUMNS: '160', LINES: '40', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (c: Buffer) => void (output += c.toString()));
  child.stderr.on('data', (c: Buffer) => void (output += c.toString()));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, output })));
}

/** The text without terminal escape sequences. */
function plain(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/\x1b\[[0-9;?]*[A-Za-z]|\x1b[78]/g, '');
}

describe('wsmirror on a terminal and off it (real processes)', () => {
  let emu: RunningEmulator;
  const dir = mkdtempSync(join(tmpdir(), 'wsmirror-terminal-'));

  beforeAll(async () => {
    emu = await startEmulator();
    const ws = new UpstreamWorkspace(emu);
    await ws.createModule('big');
    // No history: every `sync` scans it whole, so the second scan knows how many rows to expect.
    await ws.createTable('big', 'items', { hasHistory: false }, [{ name: 'name', type: 'string', labels: { '': 'Name' } }]);
    await ws.createRecords('big', 'items', Array.from({ length: ROWS }, (_, i) => ({ name: `row ${i}` })));
    // 20 ms per answer, so a scan lasts about a second however fast the sync: long enough for
    // the bar to be drawn (without it, a scan of these rows ends before the first frame).
    await ws.setFaults({ latencyMs: 20 });
  }, 120_000);
  afterAll(async () => {
    await emu?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('on a terminal: readable logs, a bar with rows, rate, share and ETA, and a summary per cycle', async () => {
    const env = daemonEnv(emu, { url: `sqlite:${join(dir, 'tty.db')}` }, { WSMIRROR_LOG_LEVEL: 'info' });
    const first = await onTerminal(['sync'], env, dir);
    expect(first.code, first.output).toBe(0);
    const second = await onTerminal(['sync'], env, dir);
    expect(second.code, second.output).toBe(0);
    const text = plain(second.output);
    expect(text).not.toContain('{"level"');
    // pino-pretty's shape: time, level, message.
    expect(text).toMatch(/\[\d\d:\d\d:\d\d\] INFO: cycle done in [^:]+: 1 table, 20,000 rows in \(20,000 upserted, 0 deleted\), 0 edits out/);
    // A bar for the table being scanned, with the share done and an ETA (the mirror held its rows).
    expect(text).toMatch(/sync big\.items │ [█░]+ +\d+% │ [\d,]+\/20,000 rows │ [\d,]+ rows\/s │ ETA \S+/);
    expect(text).toMatch(/sync big\.items: 20,000 rows in \S+ \([\d,]+ rows\/s\)/);
    // The first backfill shows a share of upstream's estimated size (the list endpoint gives no
    // total; wsmirror estimates one before the scan).
    expect(plain(first.output)).toMatch(/sync big\.items │ [█░]+ +\d+% │ [\d,]+\/[\d,]+ rows │ [\d,]+ rows\/s │ ETA \S+/);
  }, 120_000);

  it('with --log-format json on a terminal: JSON lines', async () => {
    const env = daemonEnv(emu, { url: `sqlite:${join(dir, 'tty-json.db')}` }, { WSMIRROR_LOG_LEVEL: 'info', WSMIRROR_LOG_PROGRESS_INTERVAL: '100ms' });
    const run = await onTerminal(['sync', '--log-format', 'json'], env, dir);
    expect(run.code, run.output).toBe(0);
    const lines = run.output.split(/\r?\n/).filter((l) => l.trim() !== '');
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(() => JSON.parse(line), line).not.toThrow();
    expect(run.output).not.toContain('█');
  }, 120_000);

  it('off a terminal: JSON lines, the summary among them with its fields', async () => {
    const env = daemonEnv(emu, { url: `sqlite:${join(dir, 'pipe.db')}` }, { WSMIRROR_LOG_LEVEL: 'info', WSMIRROR_LOG_PROGRESS_INTERVAL: '100ms' });
    const run = await runWsmirror(['sync'], env, { cwd: dir });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toBe('');
    const lines = run.stdout.split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as { msg: string; cycle?: unknown; progress?: unknown });
    expect(lines.find((l) => l.msg.startsWith('cycle done'))).toMatchObject({ cycle: { tables: 1, upserted: ROWS, deleted: 0, pushed: 0 } });
    expect(lines.some((l) => l.progress !== undefined)).toBe(true);
  }, 120_000);
});
