import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { apiOf } from '../helpers/emulator.ts';
import { spawnEmulator, type EmulatorProcess } from '../helpers/processes.ts';
import { adminOf, field, makeModule, makeTable, ok, recordsPath } from '../helpers/schema.ts';

/**
 * A `--data` restart keeps the clock discipline: the clock itself starts again on real time, yet
 * no change is stamped, and no poll answers, before an `asOf` or a change stamp of the previous run.
 */
describe('wsmirror emulator --data keeps polls ordered across a restart', () => {
  const dir = mkdtempSync(join(tmpdir(), 'wsmirror-data-restart-'));
  const running: EmulatorProcess[] = [];
  const start = async (dataFile: string) => {
    const emu = await spawnEmulator({ args: ['--data', dataFile] });
    running.push(emu);
    return emu;
  };
  afterAll(async () => {
    await Promise.all(running.map((p) => p.stop()));
    rmSync(dir, { recursive: true, force: true });
  });

  it('after a clock advance, a poll resumed from the kept asOf sees a record made after the restart', async () => {
    const dataFile = join(dir, 'advanced.db');
    const first = await start(dataFile);
    await makeModule(first, 'crm');
    await makeTable(first, 'crm', 'people', { hasHistory: true }, [field('name', 'string')]);
    const changes = `${recordsPath('crm', 'people')}/changes`;

    ok(await adminOf(first)('PUT', 'clock', { advanceMs: 45_000 }));
    const kept = ok(await apiOf(first)('GET', `${changes}?since=1970-01-01T00:00Z`)).body.meta.asOf as string;
    const keptSchema = ok(await apiOf(first)('GET', 'schema/changes?since=1970-01-01T00:00Z')).body.meta.asOf as string;
    await first.stop();

    const second = await start(dataFile);
    const made = ok(await apiOf(second)('POST', recordsPath('crm', 'people'), { records: [{ name: 'after' }] })).body.data;
    ok(await apiOf(second)('POST', 'modules/crm/tables', { name: 'later' }));

    const poll = ok(await apiOf(second)('GET', `${changes}?since=${kept}`)).body;
    expect(poll.meta.asOf >= kept, `meta.asOf ${poll.meta.asOf} vs since ${kept}`).toBe(true);
    expect(poll.data.map((c: any) => [c.id, c.changeType])).toEqual([[made.ids[0], 'create']]);
    expect(poll.data[0].changedAt > kept).toBe(true);

    const schema = ok(await apiOf(second)('GET', `schema/changes?since=${keptSchema}`)).body;
    expect(schema.meta.asOf >= keptSchema).toBe(true);
    expect(schema.data.filter((c: any) => c.changedAt > keptSchema).map((c: any) => c.kind)).toContain('Table');
  });

  it('after a clock advance with no poll, changes made after the restart are stamped after the logged ones', async () => {
    const dataFile = join(dir, 'unpolled.db');
    const first = await start(dataFile);
    await makeModule(first, 'crm');
    await makeTable(first, 'crm', 'people', { hasHistory: true }, [field('name', 'string')]);
    ok(await adminOf(first)('PUT', 'clock', { advanceMs: 45_000 }));
    ok(await apiOf(first)('POST', recordsPath('crm', 'people'), { records: [{ name: 'before' }] }));
    await first.stop();

    const second = await start(dataFile);
    ok(await apiOf(second)('POST', recordsPath('crm', 'people'), { records: [{ name: 'after' }] }));
    const poll = ok(await apiOf(second)('GET', `${recordsPath('crm', 'people')}/changes?since=1970-01-01T00:00Z`)).body;
    const [before, after] = poll.data.map((c: any) => c.changedAt as string);
    expect(after! > before!, `${after} after ${before}`).toBe(true);
    expect(poll.meta.asOf >= after!).toBe(true);
  });
});
