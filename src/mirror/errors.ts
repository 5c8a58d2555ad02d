import { WsmirrorError } from '../errors.ts';

/**
 * A mirror operation cannot be carried out: an unknown table, a stale schema plan, a value that
 * does not fit its field type. Connection and URL problems are `ConfigError` (or
 * `MirrorUnavailableError`, for a database not reachable now) instead.
 */
export class MirrorError extends WsmirrorError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('MIRROR', message, options);
  }
}

/** A value does not have the shape its field type requires (either direction). */
export class MirrorValueError extends WsmirrorError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('MIRROR_VALUE', message, options);
  }
}

/**
 * A schema change could not take the locks it needs in time: other sessions hold the table (a
 * long BI query, a transaction left open). The message names them and says what to do; thrown
 * inside a TableSchemaError, so that the table waits and the other tables' changes apply.
 */
export class MirrorLockedError extends WsmirrorError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('MIRROR_LOCKED', message, options);
  }
}

/**
 * The DDL of one table's schema change failed in the database (a view of a user's own that
 * depends on the column, a limit of the database): `tableId` names the table, so the schema pull
 * can hold that one back and apply the rest. The cause's message (and, on Postgres, its DETAIL)
 * is kept.
 */
export class TableSchemaError extends MirrorError {
  readonly tableId: string;
  readonly detail: unknown;
  /** The database refused because objects of a user's depend on what the change drops or alters (Dialect.refusedForDependants). */
  readonly dependants: boolean;
  constructor(tableId: string, cause: unknown, options: { dependants?: boolean } = {}) {
    super(cause instanceof Error ? cause.message : String(cause), { cause });
    this.tableId = tableId;
    this.detail = (cause as { detail?: unknown } | null)?.detail;
    this.dependants = options.dependants ?? false;
  }
}
