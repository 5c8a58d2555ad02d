import { randomBytes } from 'node:crypto';
import type { EndpointName, FieldCreate, Table } from '../api/index.ts';
import { CheckFailure } from './check-failure.ts';
import { expectOk, expectStatus } from './expectations.ts';
import type { Exchange, Probe, ProbeRequest } from './probe.ts';

/**
 * Scratch tables: the only tables the suite creates, renames, fills or deletes. Every name is
 * `wsmconf_<run id>_<purpose>`, so a run can tell its own tables (this run id) and those of other
 * runs (the prefix and a run id) from every other table of the module, which it never touches.
 *
 * A run id is 10 characters of a-z0-9: the minute the run ends by at the latest, by the
 * endpoint's clock (6 characters, base 36, minutes since 1970), then 4 random ones. A run stops
 * itself at that time, so once it is past (and a minute more for a request still on its way),
 * no check of that run can be using its tables: they are leftovers any later run may delete.
 * Before it, the tables may belong to a run going on right now, and are left alone.
 */
export const SCRATCH_PREFIX = 'wsmconf_';
const DEADLINE_CHARS = 6;
const RANDOM_CHARS = 4;
const SCRATCH_RE = new RegExp(`^${SCRATCH_PREFIX}([a-z0-9]{${DEADLINE_CHARS}}[a-z0-9]{${RANDOM_CHARS}})_[a-z0-9_]+$`);
const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';
const MINUTE_MS = 60_000;
/** How long past its end a run's tables are still spared: a request sent before the end may land after it. */
export const LEFTOVER_GRACE_MS = MINUTE_MS;
// The pattern of the API's table names: a name outside it cannot be created, whatever a check sends.
const TABLE_NAME_RE = /^[a-z0-9_]{1,100}$/;

/** A fresh run id for a run that ends by `endsByMs` (the endpoint's clock), rounded up to the minute. */
export function newRunId(endsByMs: number): string {
  const minute = Math.ceil(endsByMs / MINUTE_MS);
  const random = [...randomBytes(RANDOM_CHARS)].map((b) => ALPHABET[b % ALPHABET.length]).join('');
  return minute.toString(36).padStart(DEADLINE_CHARS, '0').slice(-DEADLINE_CHARS) + random;
}

/** When the run of this id ends at the latest (ms since 1970, the endpoint's clock). */
export function runEndsBy(runId: string): number {
  return parseInt(runId.slice(0, DEADLINE_CHARS), 36) * MINUTE_MS;
}

/** Whether a run has provably ended at `nowMs` (the endpoint's clock): its tables are leftovers. */
export function runHasEnded(runId: string, nowMs: number): boolean {
  return runEndsBy(runId) + LEFTOVER_GRACE_MS < nowMs;
}

export function scratchName(runId: string, purpose: string): string {
  return `${SCRATCH_PREFIX}${runId}_${purpose}`;
}

/** The run id of a scratch table's name, or undefined for any other name. */
export function scratchRunId(tableName: string): string | undefined {
  return SCRATCH_RE.exec(tableName)?.[1];
}

/** A check used a scratch table it did not declare, or declared one it never made: the suite's own bug. */
export class ScratchDeclarationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ScratchDeclarationError';
  }
}

type Send = <N extends EndpointName>(endpoint: N, request?: ProbeRequest) => Promise<Exchange<N>>;

/**
 * The scratch tables of one check: created through the API, deleted when the check ends. Only
 * the purposes the check declares (`scratchTables`, which `--dry-run` lists) can be named,
 * created or renamed to; a declared one the check never made is reported by `unmade()`.
 */
export class ScratchTables {
  readonly runId: string;
  readonly #send: Send;
  readonly #module: string;
  readonly #declared: readonly string[];
  readonly #live = new Set<string>();
  readonly #made = new Set<string>();

  constructor(send: Send, module: string, runId: string, declared: readonly string[]) {
    this.#send = send;
    this.#module = module;
    this.runId = runId;
    this.#declared = declared;
  }

  /** `wsmconf_<run>_`: what every scratch table name of this run starts with. */
  get prefix(): string {
    return scratchName(this.runId, '');
  }

  /** A table name of this run that no check creates: for 404 checks. */
  get missingName(): string {
    return scratchName(this.runId, 'missing');
  }

  /** The name of a declared scratch table; any other purpose is refused. */
  name(purpose: string): string {
    if (!this.#declared.includes(purpose)) {
      throw new ScratchDeclarationError(`the check uses the scratch table "${purpose}", which its scratchTables (${JSON.stringify(this.#declared)}) does not declare`);
    }
    return scratchName(this.runId, purpose);
  }

  /** Creates `wsmconf_<run>_<purpose>` with these properties and fields; a failure fails the check. */
  async create(purpose: string, props: Record<string, unknown> = {}, fields: readonly FieldCreate[] = []): Promise<Table & { name: string }> {
    const name = this.name(purpose);
    const created = await this.#send('createTable', { body: { name, ...props } });
    if (created.status >= 200 && created.status < 300) this.#took(name);
    const table = expectOk(created, `creating the scratch table ${name} succeeds`).data;
    if (fields.length > 0) {
      const batch = await this.#send('createFields', { params: { tableName: name }, body: fields });
      expectStatus(batch, 201, `creating the fields of ${name} answers 201`);
    }
    return { ...table, name };
  }

  /** Takes over a scratch table the check created itself. */
  adopt(name: string): void {
    this.#took(name);
  }

  /** Records a rename made by a check, so the new name is the one deleted. */
  renamed(from: string, to: string): void {
    this.#live.delete(from);
    this.#took(to);
  }

  /**
   * Refuses, before it is sent, a request that would create a table, or rename one, to a valid
   * name that is not a declared scratch table of the check (names the API must refuse pass: the
   * checks of its errors send them).
   */
  guard(endpoint: EndpointName, request: ProbeRequest): void {
    if (endpoint !== 'createTable' && endpoint !== 'updateTable') return;
    const name = (request.body as { name?: unknown } | undefined)?.name;
    if (typeof name !== 'string' || !TABLE_NAME_RE.test(name) || name === this.missingName) return;
    if (!this.#declared.some((purpose) => scratchName(this.runId, purpose) === name)) {
      throw new ScratchDeclarationError(`the check would ${endpoint === 'createTable' ? 'create' : 'rename a table to'} ${this.#module}.${name}, which is not one of its declared scratch tables (${JSON.stringify(this.#declared)}); nothing was sent`);
    }
  }

  /** Declared purposes the check never created. */
  unmade(): string[] {
    return this.#declared.filter((purpose) => !this.#made.has(purpose));
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

  #took(name: string): void {
    const purpose = name.startsWith(this.prefix) ? name.slice(this.prefix.length) : name;
    this.name(purpose);
    this.#live.add(name);
    this.#made.add(purpose);
  }
}

export interface SweepResult {
  deleted: string[];
  /** Tables that could not be deleted, with the reason. */
  failed: { name: string; error: string }[];
  /** Scratch tables of other runs that may still be going on: left alone. */
  kept: string[];
}

/** The names of the module's tables (one request). */
export async function listTableNames(probe: Probe, module: string, signal?: AbortSignal): Promise<string[]> {
  const list = await probe.send('listTables', { params: { moduleName: module } }, signal);
  return expectOk(list, `listing the tables of module ${module} succeeds`).data.map((t) => t.name);
}

/**
 * Deletes, one by one, the scratch tables among `tableNames` whose run `remove` selects: this
 * run's (the last sweep of a run, which also finds tables of a request cut short) or runs that
 * have ended (leftovers, removed first). Scratch tables of other runs are kept.
 */
export async function deleteScratchTables(
  probe: Probe, module: string, tableNames: readonly string[], remove: (runId: string) => boolean, signal?: AbortSignal,
): Promise<SweepResult> {
  const result: SweepResult = { deleted: [], failed: [], kept: [] };
  for (const name of tableNames) {
    const runId = scratchRunId(name);
    if (runId === undefined) continue;
    if (!remove(runId)) {
      result.kept.push(name);
      continue;
    }
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
