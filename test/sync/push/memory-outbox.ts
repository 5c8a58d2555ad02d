import type { CreatedRow, EditOutcome, OutboxEntry, OutboxFilter, OutboxStatus, PendingEdit, SentCreate } from '../../../src/mirror/index.ts';
import type { Mirror } from '../../../src/mirror/mirror.ts';
import type { PushMirror } from '../../../src/sync/push/push-step.ts';

/**
 * A test double of the mirror's outbox operations ONLY (the push's pure logic is tested against
 * it; catalog and row writes are a real mirror's). One record per local edit, one entry per field
 * (a create or delete: one entry), so outcomes can settle fields apart as the real outbox does.
 */
interface Entry {
  entryId: number;
  field: string | null;
  status: OutboxStatus | 'done';
  attempts: number;
  lastError: string | null;
  nextAttemptAt: string | null;
  sendingSince: string | null;
}

interface LocalRecord {
  tableId: string;
  recordId: number;
  operation: PendingEdit['operation'];
  values: Map<string, unknown>;
  oldValues: Map<string, unknown>;
  entries: Entry[];
  /** The body a create was last marked as sent with. */
  sentBody?: Readonly<Record<string, unknown>>;
}

export class MemoryOutbox implements PushMirror {
  readonly records: LocalRecord[] = [];
  readonly settled: EditOutcome[] = [];
  readonly preferredPushRoundRecords = 5_000;
  readonly #mirror: Pick<Mirror, 'readCatalog' | 'applyRows'>;
  #nextEntry = 1;
  /** The creates settled, as the mirror keeps them. */
  readonly #created: CreatedRow[] = [];

  constructor(mirror: Pick<Mirror, 'readCatalog' | 'applyRows'>) {
    this.#mirror = mirror;
  }

  readCatalog: Mirror['readCatalog'] = () => this.#mirror.readCatalog();
  applyRows: Mirror['applyRows'] = (tableId, batch) => this.#mirror.applyRows(tableId, batch);

  /** Records a local edit; returns its entry ids (one per field of an update). */
  add(edit: {
    tableId: string; recordId: number; operation: PendingEdit['operation'];
    values?: Record<string, unknown>; oldValues?: Record<string, unknown>; sendingSince?: string;
  }): number[] {
    const values = new Map(Object.entries(edit.values ?? {}));
    const fields = edit.operation === 'update' ? [...values.keys()] : [null];
    const entries = fields.map((field): Entry => ({
      entryId: this.#nextEntry++, field, status: 'pending', attempts: 0, lastError: null, nextAttemptAt: null,
      sendingSince: edit.sendingSince ?? null,
    }));
    this.records.push({
      tableId: edit.tableId, recordId: edit.recordId, operation: edit.operation, values,
      oldValues: new Map(Object.entries(edit.oldValues ?? {})), entries,
    });
    return entries.map((e) => e.entryId);
  }

  entry(entryId: number): Entry {
    const found = this.records.flatMap((r) => r.entries).find((e) => e.entryId === entryId);
    if (!found) throw new Error(`no entry ${entryId}`);
    return found;
  }

  async readPendingEdits(options: { now: string; limit: number; after?: number }): Promise<PendingEdit[]> {
    const out: PendingEdit[] = [];
    for (const record of this.records) {
      // A record with a due entry is read with all its pending entries, as the mirror does.
      const firstDueEntryId = Math.min(...record.entries
        .filter((e) => e.status === 'pending' && (e.nextAttemptAt === null || e.nextAttemptAt <= options.now)).map((e) => e.entryId));
      if (firstDueEntryId === Infinity) continue;
      if (options.after !== undefined && firstDueEntryId <= options.after) continue;
      const due = record.entries.filter((e) => e.status === 'pending');
      const fields = new Set(due.map((e) => e.field));
      const pick = (m: Map<string, unknown>) => new Map([...m].filter(([k]) => record.operation !== 'update' || fields.has(k)));
      out.push({
        tableId: record.tableId, recordId: record.recordId, firstDueEntryId, operation: record.operation,
        entryIds: due.map((e) => e.entryId),
        values: pick(record.values), oldValues: pick(record.oldValues), retriedFields: new Set(),
        fieldEntryIds: new Map(due.filter((e) => e.field !== null).map((e) => [e.field!, [e.entryId]])),
        attempts: Math.max(...due.map((e) => e.attempts)),
        sendingSince: due.find((e) => e.sendingSince !== null)?.sendingSince ?? null,
        sentEntryIds: due.filter((e) => e.sendingSince !== null).map((e) => e.entryId),
        sentBody: record.sentBody ?? null, unsendable: [],
      } as PendingEdit);
      if (out.length >= options.limit) break;
    }
    return out;
  }

  /** The value before each field's edit, as recorded: this double keeps one edit per record. */
  async readBaseValues(tableId: string, recordIds: readonly number[]): Promise<Map<number, Map<string, unknown>>> {
    const wanted = new Set(recordIds);
    return new Map(this.records.filter((r) => r.tableId === tableId && wanted.has(r.recordId)).map((r) => [r.recordId, new Map(r.oldValues)]));
  }

  async markSending(creates: readonly SentCreate[], at: string): Promise<void> {
    for (const create of creates) {
      for (const id of create.entryIds) this.entry(id).sendingSince = at;
      this.records.find((r) => r.entries.some((e) => e.entryId === create.entryIds[0]))!.sentBody = create.body;
    }
  }

  async settleEdits(outcomes: readonly EditOutcome[]): Promise<void> {
    for (const outcome of outcomes) {
      this.settled.push(outcome);
      for (const id of outcome.entryIds) {
        const e = this.entry(id);
        if (outcome.kind === 'unanswered') {
          // Still marked as being sent.
          if (outcome.attempt) e.attempts += 1;
          Object.assign(e, { status: 'pending', lastError: outcome.message, nextAttemptAt: outcome.nextAttemptAt });
          continue;
        }
        e.sendingSince = null;
        if (outcome.kind === 'pushed' || outcome.kind === 'discarded') e.status = 'done';
        else if (outcome.kind === 'waiting') {
          // No attempt; the double does not follow the blocker's schedule.
          e.lastError = outcome.message;
          e.status = 'pending';
          e.nextAttemptAt = outcome.nextAttemptAt;
        } else {
          e.attempts += 1;
          e.lastError = outcome.message;
          e.status = outcome.kind === 'retry' ? 'pending' : outcome.kind;
          e.nextAttemptAt = outcome.kind === 'retry' ? outcome.nextAttemptAt : null;
        }
      }
      if (outcome.kind === 'pushed' && outcome.createdId !== undefined) {
        const created = this.records.find((r) => r.entries.some((e) => e.entryId === outcome.entryIds[0]))!;
        const oldId = created.recordId;
        created.recordId = outcome.createdId;
        this.#created.push({ tableId: created.tableId, tempId: oldId, createdId: outcome.createdId });
        for (const r of this.records) {
          const waited = r === created || [...r.values.values()].includes(oldId);
          for (const [k, v] of r.values) if (v === oldId) r.values.set(k, outcome.createdId);
          // What waited for this create is due at once.
          if (waited) for (const e of r.entries) if (e.status === 'pending') Object.assign(e, { nextAttemptAt: null, lastError: null });
        }
      }
    }
  }

  /** As the mirror does: references to rows created already take their upstream ids, and are due. */
  async followCreatedRows(rows: readonly { tableId: string; recordId: number }[]): Promise<CreatedRow[]> {
    const found = this.#created.filter((c) => rows.some((r) => r.tableId === c.tableId && r.recordId === c.tempId));
    for (const { tempId, createdId } of found) {
      for (const r of this.records) {
        if (![...r.values.values()].includes(tempId)) continue;
        for (const [k, v] of r.values) if (v === tempId) r.values.set(k, createdId);
        for (const e of r.entries) if (e.status === 'pending') Object.assign(e, { nextAttemptAt: null, lastError: null });
      }
    }
    return found;
  }

  async boundCreatedIds(tableId: string, createdIds: readonly number[]): Promise<Set<number>> {
    return new Set(this.#created.filter((c) => c.tableId === tableId && createdIds.includes(c.createdId)).map((c) => c.createdId));
  }

  async oldestPendingAt(): Promise<string | null> {
    return null;
  }

  /** The creates still in the double, as entries: a local insert's entry id is minus its row's id, as in the real outbox. */
  async listOutbox(filter: OutboxFilter): Promise<OutboxEntry[]> {
    const ids = new Set(filter.entryIds ?? []);
    return this.records.filter((r) => r.operation === 'create' && ids.has(-r.recordId) && r.entries.some((e) => e.status !== 'done'))
      .map((r) => ({ entryId: -r.recordId, tableId: r.tableId, recordId: r.recordId, operation: 'insert' }) as OutboxEntry);
  }

  retryOutbox(): never {
    throw new Error('not part of the double');
  }

  discardOutbox(): never {
    throw new Error('not part of the double');
  }
}
