import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { apiOf } from '../helpers/emulator.ts';
import { runWsmirror, spawnEmulator, stopProcess, type EmulatorProcess } from '../helpers/processes.ts';
import { makeModule, makeTable, field, ok, recordsPath } from '../helpers/schema.ts';

/** One `--data` file belongs to one emulator process at a time. */
describe('wsmirror emulator --data is taken by one process', () => {
  const dir = mkdtempSync(join(tmpdir(), 'wsmirror-data-lock-'));
  const running: EmulatorProcess[] = [];
  afterAll(async () => {
    await Promise.all(running.map((p) => p.stop()));
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses a second emulator on the same file (exit 78, naming it); the first goes on answering writes', async () => {
    const dataFile = join(dir, 'state.db');
    const first = await spawnEmulator({ args: ['--data', dataFile] });
    running.push(first);
    await makeModule(first, 'crm');
    await makeTable(first, 'crm', 'people', { hasHistory: true }, [field('name', 'string')]);

    const second = await runWsmirror(
      ['emulator', '--port', '0', '--api-key', 'k', '--data', dataFile], {}, { killAfterMs: 20_000 },
    );
    expect(second.code, second.stderr).toBe(78);
    expect(second.stderr).toContain(dataFile);
    expect(second.stderr).toMatch(/in use by another/);
    expect(second.stdout).not.toMatch(/listening/);

    for (let i = 0; i < 5; i++) {
      ok(await apiOf(first)('POST', recordsPath('crm', 'people'), { records: [{ name: `n${i}` }] }), `write ${i}`);
    }
    expect((await apiOf(first)('GET', recordsPath('crm', 'people'))).body.data).toHaveLength(5);
  });

  it('takes the file over once its holder is gone, even after kill -9', async () => {
    const dataFile = join(dir, 'killed.db');
    const first = await spawnEmulator({ args: ['--data', dataFile] });
    await makeModule(first, 'crm');
    await stopProcess(first.child, 'SIGKILL');

    const next = await spawnEmulator({ args: ['--data', dataFile] });
    running.push(next);
    expect((await apiOf(next)('GET', '')).body.data.modules.map((m: any) => m.name)).toEqual(['crm']);
    ok(await apiOf(next)('POST', 'modules/crm/tables', { name: 'after' }));
  });
});
