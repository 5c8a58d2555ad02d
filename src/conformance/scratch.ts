import { randomBytes } from 'node:crypto';
import type { EndpointName, FieldCreate, Table } from '../api/index.ts';
import { CheckFailure } from './check-failure.ts';
import { expectOk, expectStatus } from './expectations.ts';
import type { Exchange, Probe, ProbeRequest } from './probe.ts';

/**
 * Scratch tables: the only tables the suite creates, renames, fills or deletes. Every name is
 * `wsmconf_<run id>_<purpose>`, so a run can tell its own tables (this run id) and those an
 * interrupted earlier run left behind (the prefix and a run id) from every other table of the
 * module, which it never touches.
 */
export const SCRATCH_PREFIX = 'wsmconf_';
const RUN_ID_LENGTH = 8;
const SCRATCH_RE = new RegExp(`^${SCRATCH_PREFIX}([a-z0-9]{${RUN_ID_LENGTH}})_[a-z0-9_]+$`);

/** A fresh run id: 8 characters of a-z0-9. */
export function newRunId(): string {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
  return [...randomBytes(RUN_ID_LENGTH)].map((b) => alphabet[b % alphabet.length]).join('');
}

export function scratchName(runId: string, purpose: string): string {
  return `${SCRATCH_PREFIX}${runId}_${purpose}`;
}

/** The run id of a scratch table's name, or undefined for any other name. */
export function scratchRunId(tableName: string): string | undefined {
  return SCRATCH_RE.exec(tableName)?.[1];
}

type Send = <N extends EndpointName>(endpoint: N, request?: ProbeRequest) => Promise<Exchange<N>>;

/** The scratch tables of one check: created through the API, deleted when the check ends. */
export class ScratchTables {
  readonly runId: string;
  readonly #send: Send;
  readonly #module: string;
  readonly #live = new Set<string>();

  constructor(send: Send, module: string, runId: string) {
    this.#send = send;
    this.#module = module;
    this.runId = runId;
  }

  name(purpose: string): string {
    return scratchName(this.runId, purpose);
  }

  /** Creates `wsmconf_<run>_<purpose>` with these properties and fields; a failure fails the check. */
  async create(purpose: string, props: Record<string, unknown> = {}, fields: readonly FieldCreate[] = []): Promise<Table & { name: string }> {
    const name = this.name(purpose);
    const created = await this.#send('createTable', { body: { name, ...props } });
    if (created.status >= 200 && created.status < 300) this.#live.add(name);
    const table = expectOk(created, `creating the scratch table ${name} succeeds`).data;
    if (fields.length > 0) {
      const batch = await this.#send('createFields', { params: { tableName: name }, body: fields });
      expectStatus(batch, 201, `creating the fields of ${name} answers 201`);
    }
    return { ...table, name };
  }

  /** Takes over a scratch table the check created itself. */
  adopt(name: string): void {
    this.#live.add(name);
  }

  /** Records a rename made by a check, so the new name is the one deleted. */
  renamed(from: string, to: string): void {
    if (this.#live.delete(from)) this.#live.add(to);
  }

  /** Deletes what the check left (a 404 means it is gone already). */
  async removeAll(): Promise<void> {
    for (const name of [...this.#live]) {
      const res = await this.#send('deleteTable', { params: { tableName: name } });
      if (res.status !== 404 && (res.status < 200 || res.status > 299)) {
        throw new CheckFailure(`deleting the scratch table ${this.#module}.${name} succeeds`, 'a 2xx status', `HTTP ${res.status}`, res);
      }
      this.#live.delete(name);
    }
  }
}

export interface SweepResult {
  deleted: string[];
  /** Tables that could not be deleted, with the reason. */
  failed: { name: string; error: string }[];
}

/**
 * Deletes the module's scratch tables of the runs `which` selects: this run's (the last sweep of
 * a run, which also finds tables of a request cut short) or every other run's (leftovers of an
 * interrupted run, removed first). Lists the module once, then deletes one by one.
 */
export async function sweepScratchTables(
  probe: Probe, module: string, which: (runId: string) => boolean, signal?: AbortSignal,
): Promise<SweepResult> {
  const result: SweepResult = { deleted: [], failed: [] };
  const list = await probe.send('listTables', { params: { moduleName: module } }, signal);
  const tables = expectOk(list, `listing the tables of module ${module} succeeds`).data;
  for (const { name } of tables) {
    const runId = scratchRunId(name);
    if (runId === undefined || !which(runId)) continue;
    try {
      const res = await probe.send('deleteTable', { params: { moduleName: module, tableName: name } }, signal);
      if ((res.status >= 200 && res.status < 300) || res.status === 404) result.deleted.push(name);
      else result.failed.push({ name, error: `HTTP ${res.status}` });
    } catch (error) {
      result.failed.push({ name, error: error instanceof Error ? error.message : String(error) });
    }
  }
  return result;
}
