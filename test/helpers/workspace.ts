import type { FieldCreate } from '../../src/api/index.ts';
import { call, type RunningEmulator } from './emulator.ts';

/**
 * Builds upstream state through the emulator's HTTP API (admin surface for modules), so
 * end-to-end suites set up exactly what a real workspace would hold.
 */
export class UpstreamWorkspace {
  readonly emu: RunningEmulator;
  constructor(emu: RunningEmulator) {
    this.emu = emu;
  }

  async #ok<T = any>(method: string, path: string, body?: unknown, expected?: number): Promise<T> {
    const res = await call<any>(this.emu.url, method, path, {
      token: path.startsWith('/_emulator/') ? this.emu.adminToken : this.emu.apiKey,
      ...(body === undefined ? {} : { body }),
    });
    if (res.status >= 300 || (expected !== undefined && res.status !== expected)) {
      throw new Error(`${method} ${path} answered ${res.status}: ${JSON.stringify(res.body)}`);
    }
    return res.body as T;
  }

  #table(module: string, table: string): string {
    return `${this.emu.base}/modules/${module}/tables/${table}`;
  }

  createModule(name: string, props: Record<string, unknown> = {}) {
    return this.#ok('POST', '/_emulator/modules', { name, ...props });
  }

  deleteModule(name: string) {
    return this.#ok('DELETE', `/_emulator/modules/${name}`);
  }

  async createTable(module: string, name: string, props: Record<string, unknown> = {}, fields: FieldCreate[] = []) {
    const table = await this.#ok('POST', `${this.emu.base}/modules/${module}/tables`, { name, ...props });
    if (fields.length > 0) await this.#ok('POST', `${this.#table(module, name)}/fields/batch`, fields);
    return table.data;
  }

  patchTable(module: string, table: string, patch: Record<string, unknown>) {
    return this.#ok('PATCH', this.#table(module, table), patch);
  }

  deleteTable(module: string, table: string) {
    return this.#ok('DELETE', this.#table(module, table));
  }

  addFields(module: string, table: string, fields: FieldCreate[]) {
    return this.#ok('POST', `${this.#table(module, table)}/fields/batch`, fields);
  }

  patchField(module: string, table: string, field: string, patch: Record<string, unknown>) {
    return this.#ok('PATCH', `${this.#table(module, table)}/fields/${field}`, patch);
  }

  deleteField(module: string, table: string, field: string) {
    return this.#ok('DELETE', `${this.#table(module, table)}/fields/${field}`);
  }

  async getTable(module: string, table: string) {
    return (await this.#ok('GET', this.#table(module, table))).data;
  }

  /** Creates records in batches of `batchSize`; returns their ids in order. */
  async createRecords(module: string, table: string, records: Record<string, unknown>[], batchSize = 1000): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < records.length; i += batchSize) {
      const res = await this.#ok('POST', `${this.#table(module, table)}/records`, { records: records.slice(i, i + batchSize) });
      ids.push(...res.data.ids);
    }
    return ids;
  }

  updateRecords(module: string, table: string, records: Record<string, unknown>[]) {
    return this.#ok('PATCH', `${this.#table(module, table)}/records`, { records });
  }

  deleteRecords(module: string, table: string, ids: (string | number)[]) {
    return this.#ok('DELETE', `${this.#table(module, table)}/records`, { records: ids });
  }

  /** Every record of a table, read page by page (sorted by id). */
  async allRecords(module: string, table: string): Promise<{ id: string; values: Record<string, unknown> }[]> {
    const out: { id: string; values: Record<string, unknown> }[] = [];
    for (let offset = 0; ; offset += 100) {
      const res = await this.#ok('GET', `${this.#table(module, table)}/records?sort=id&limit=100&offset=${offset}`);
      out.push(...res.data);
      if (!res.page_info.has_more) return out;
    }
  }

  setFaults(faults: Record<string, unknown>) {
    return this.#ok('PUT', '/_emulator/faults', faults);
  }

  clearFaults() {
    return this.#ok('DELETE', '/_emulator/faults');
  }
}
