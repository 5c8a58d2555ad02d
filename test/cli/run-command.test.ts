import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type RunningEmulator } from '../helpers/emulator.ts';
import { runWsmirror } from '../helpers/processes.ts';

describe('wsmirror run (real process): start-up logs', () => {
  let emu: RunningEmulator;
  const dir = mkdtempSync(join(tmpdir(), 'wsmirror-run-'));
  beforeAll(async () => {
    emu = await startEmulator();
  });
  afterAll(async () => {
    await emu?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('warns about misspelt WSMIRROR_* variables and logs the configuration with the key hidden', async () => {
    const res = await runWsmirror(['run'], {
      WSMIRROR_BASE_URL: emu.url,
      WSMIRROR_API_KEY: emu.apiKey,
      WSMIRROR_WORKSPACE_ID: emu.workspaceId,
      WSMIRROR_MIRROR_URL: `sqlite:${join(dir, 'm.db')}`,
      WSMIRROR_HTTP_PORT: '0',
      WSMIRROR_LOG_LEVEL: 'debug',
      WSMIRROR_SCHEDUEL: '5s',
    }, { cwd: dir, killAfterMs: 20_000, killWhen: (stdout) => stdout.includes('daemon started') });
    const lines = res.stdout.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);
    const warning = lines.find((l) => l['level'] === 'warn' && String(l['msg']).includes('unknown environment variables'));
    expect(warning, res.stdout).toMatchObject({ variables: ['WSMIRROR_SCHEDUEL'] });
    const configuration = lines.find((l) => l['msg'] === 'configuration');
    expect(configuration, res.stdout).toMatchObject({ config: { upstream: { baseUrl: emu.url, workspaceId: emu.workspaceId } } });
    expect(res.stdout).not.toContain(emu.apiKey);
  });
});
