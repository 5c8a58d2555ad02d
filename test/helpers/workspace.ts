import type { FieldCreate } from '../../src/api/index.ts';
import { apiOf, type EmulatorEndpoint } from './emulator.ts';
import { adminOf, fieldsPath, makeModule, makeTable, ok, recordsPath, tablePath } from './schema.ts';

/**
 * Builds upstream state through the emulator's HTTP API (admin surface for modules), so
 * end-to-end suites set up exactly what a real workspace would hold. Every call must succeed.
 */
export class UpstreamWorkspace {
  readonly emu: EmulatorEndpoint;
  readonly #api: ReturnType<typeof apiOf>;
  readonly #admin: ReturnType<typeof adminOf>;

  constructor(emu: EmulatorEndpoint) {
    this.emu = emu;
    this.#api = apiOf(emu);
    this.#admin = adminOf(emu);
  }

  /** A workspace call (`path` relative to the workspace); the response body. */
  async #ok<T = any>(method: string, path: string, body?: unknown): Promise<T> {
    return ok(await this.#api<T>(method, path, body), `${method} ${path}`).body;
  }

  async #adminOk<T = any>(method: string, path: string, body?: unknown): Promise<T> {
    return ok(await this.#admin<T>(method, path, body), `${method} /_emulator/${path}`).body;
  }

  /** The created module. */
  createModule(name: string, props: Record<string, unknown> = {}) {
    return makeModule(this.emu, name, props);
  }

  deleteModule(name: string) {
    return this.#adminOk('DELETE', `modules/${name}`);
  }

  /** The created table (as answered before its fields were added). */
  createTable(module: string, name: string, props: Record<string, unknown> = {}, fields: FieldCreate[] = []) {
    return makeTable(this.emu, module, name, props, fields);
  }

  patchTable(module: string, table: string, patch: Record<string, unknown>) {
    return this.#ok('PATCH', tablePath(module, table), patch);
  }

  deleteTable(module: string, table: string) {
    return this.#ok('DELETE', tablePath(module, table));
  }

  addFields(module: string, table: string, fields: FieldCreate[]) {
    return this.#ok('POST', `${fieldsPath(module, table)}/batch`, fields);
  }

  patchField(module: string, table: string, field: string, patch: Record<string, unknown>) {
    return this.#ok('PATCH', `${fieldsPath(module, table)}/${field}`, patch);
  }

  deleteField(module: string, table: string, field: string) {
    return this.#ok('DELETE', `${fieldsPath(module, table)}/${field}`);
  }

  async getTable(module: string, table: string) {
    return (await this.#ok('GET', tablePath(module, table))).data;
  }

  /** Creates records in batches of `batchSize`; returns their ids in order. */
  async createRecords(module: string, table: string, records: Record<string, unknown>[], batchSize = 1000): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < records.length; i += batchSize) {
      const res = await this.#ok('POST', recordsPath(module, table), { records: records.slice(i, i + batchSize) });
      ids.push(...res.data.ids);
    }
    return ids;
  }

  updateRecords(module: string, table: string, records: Record<string, unknown>[]) {
    return this.#ok('PATCH', recordsPath(module, table), { records });
  }

  deleteRecords(module: string, table: string, ids: (string | number)[]) {
    return this.#ok('DELETE', recordsPath(module, table), { records: ids });
  }

  /** Every record of a table, read page by page (sorted by id); smaller pages for records costly to list. */
  async allRecords(module: string, table: string, pageSize = 100): Promise<{ id: string; values: Record<string, unknown> }[]> {
    const out: { id: string; values: Record<string, unknown> }[] = [];
    for (let offset = 0; ; offset += pageSize) {
      const res = await this.#ok('GET', `${recordsPath(module, table)}?sort=id&limit=${pageSize}&offset=${offset}`);
      out.push(...res.data);
      if (!res.page_info.has_more) return out;
    }
  }

  setFaults(faults: Record<string, unknown>) {
    return this.#adminOk('PUT', 'faults', faults);
  }

  clearFaults() {
    return this.#adminOk('DELETE', 'faults');
  }

  /** `{ now }`, `{ advanceMs }` and/or `{ frozen }`, as `PUT /_emulator/clock` takes them. */
  setClock(clock: { now?: string; advanceMs?: number; frozen?: boolean }) {
    return this.#adminOk('PUT', 'clock', clock);
  }
}
