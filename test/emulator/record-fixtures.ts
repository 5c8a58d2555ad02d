import { apiOf, startEmulator, type RunningEmulator } from '../helpers/emulator.ts';
import { recordsPath } from '../helpers/schema.ts';
import { UpstreamWorkspace } from '../helpers/workspace.ts';

/** Shared set-up of the records suites: one emulator, module `crm`, tables built over HTTP. */
export interface RecordsFixture {
  emu: RunningEmulator;
  api: ReturnType<typeof apiOf>;
  ws: UpstreamWorkspace;
  /** `modules/crm/tables/<table>/records` */
  records(table: string): string;
}

export const MODULE = 'crm';

export async function startRecordsFixture(): Promise<RecordsFixture> {
  const emu = await startEmulator();
  const ws = new UpstreamWorkspace(emu);
  await ws.createModule(MODULE);
  return { emu, api: apiOf(emu), ws, records: (table) => recordsPath(MODULE, table) };
}

/** Values of one record as the list endpoint returns them. */
export async function valuesOf(fx: RecordsFixture, table: string, id: string): Promise<Record<string, unknown>> {
  const res = await fx.api('GET', `${fx.records(table)}?filter=${encodeURIComponent(JSON.stringify({ id }))}`);
  if (res.status !== 200 || res.body.data.length !== 1) throw new Error(`record ${id}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data[0].values;
}

/** Every record of a table (id order), for before/after comparisons. */
export async function allRecords(fx: RecordsFixture, table: string) {
  return fx.ws.allRecords(MODULE, table);
}
