/**
 * The daemon's errors: a few classes, each with a stable `code` that scripts and tests can rely
 * on. The emulator has its own (it shares only `src/api/` with the daemon).
 */
export class WsmirrorError extends Error {
  readonly code: string;
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/**
 * A configuration file, key or value is wrong, or the mirror's database refuses what retrying
 * cannot change: an unknown database or role, a refused password, a malformed URL (exit 78).
 */
export class ConfigError extends WsmirrorError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('CONFIG_INVALID', message, options);
  }
}

/**
 * A command that only opens an existing mirror found no SQLite file at its path (`path`, absolute):
 * a configuration error, as for any mirror that is not where the configuration says.
 */
export class MirrorFileMissingError extends ConfigError {
  readonly path: string;
  constructor(message: string, path: string) {
    super(message);
    this.path = path;
  }
}

/**
 * The mirror's database cannot be reached now, or refuses for a reason that passes: the server
 * is down, starting or restarting, its connections are used up, a statement ran into its
 * statement_timeout; or another wsmirror process holds its sync lock. Exit 1, as for an unreachable upstream: no setting needs to change, and
 * `wsmirror run` meets it at start as it does later, a failed cycle the next one tries again.
 */
export class MirrorUnavailableError extends WsmirrorError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('MIRROR_UNAVAILABLE', message, options);
  }
}

/** The command line is wrong (exit 2). */
export class UsageError extends WsmirrorError {
  constructor(message: string) {
    super('USAGE', message);
  }
}

/** Stable codes of upstream HTTP error statuses; the push step branches on them. */
export function upstreamCodeFor(status: number): string {
  if (status === 400 || status === 422) return 'UPSTREAM_BAD_REQUEST';
  if (status === 401) return 'UPSTREAM_UNAUTHORIZED';
  if (status === 403) return 'UPSTREAM_FORBIDDEN';
  if (status === 404) return 'UPSTREAM_NOT_FOUND';
  if (status === 413) return 'UPSTREAM_PAYLOAD_TOO_LARGE';
  if (status === 429) return 'UPSTREAM_RATE_LIMITED';
  if (status >= 500) return 'UPSTREAM_SERVER_ERROR';
  return 'UPSTREAM_HTTP_ERROR';
}

/** Where an upstream call went: endpoint name from `src/api/endpoints.ts`, method, path (never headers). */
export interface UpstreamCall {
  endpoint: string;
  method: string;
  path: string;
}

/**
 * The upstream answered with a non-2xx status. `upstreamMessage` is the `error.message` of the
 * body (or a short excerpt of a body that is not the spec's error shape). `attempts` > 1 means
 * an earlier attempt failed with an unknown outcome: a 404 on a retried DELETE or rename may mean
 * that attempt went through.
 */
export class UpstreamError extends WsmirrorError {
  readonly status: number;
  readonly upstreamMessage: string;
  readonly endpoint: string;
  readonly method: string;
  readonly path: string;
  readonly attempts: number;
  /** From `Retry-After`, when the upstream sent one. */
  readonly retryAfterMs: number | undefined;
  constructor(call: UpstreamCall, status: number, upstreamMessage: string, info: { attempts: number; retryAfterMs?: number | undefined }) {
    const text = upstreamMessage === '' ? '' : `: ${upstreamMessage}`;
    super(upstreamCodeFor(status), `${call.endpoint} (${call.method} ${call.path}) failed with HTTP ${status}${text}`);
    this.status = status;
    this.upstreamMessage = upstreamMessage;
    this.endpoint = call.endpoint;
    this.method = call.method;
    this.path = call.path;
    this.attempts = info.attempts;
    this.retryAfterMs = info.retryAfterMs;
  }
}

/**
 * Upstream refused (400) to list records even one at a time. The record reads ask for fewer records
 * at a time whenever upstream refuses a page (client/record-pager.ts: a request built of known-good
 * parameters that it refuses must be too much for it, as the emulator refuses one whose expressions
 * take more than its budget); this is where they could go no lower. `records` names what was
 * refused: `record 17`, or `the record after record 123 (offset 57)`.
 */
export class RecordsRefusedError extends UpstreamError {
  readonly records: string;
  constructor(refusal: UpstreamError, records: string) {
    super(refusal, refusal.status, refusal.upstreamMessage, { attempts: refusal.attempts, retryAfterMs: refusal.retryAfterMs });
    const text = refusal.upstreamMessage === '' ? '' : `: ${refusal.upstreamMessage}`;
    this.message = `${refusal.endpoint} (${refusal.method} ${refusal.path}) refused ${records} even alone, with HTTP ${refusal.status}${text}`;
    this.records = records;
  }
}

/** The upstream could not be reached or the exchange broke off: refused, reset, dropped, timed out. */
export class NetworkError extends WsmirrorError {
  readonly endpoint: string;
  readonly method: string;
  readonly path: string;
  readonly timeout: boolean;
  readonly attempts: number;
  /** The system or undici error code (`ECONNREFUSED`, `UND_ERR_SOCKET`, `TIMEOUT`…). */
  readonly causeCode: string;
  constructor(
    call: UpstreamCall,
    detail: string,
    info: { attempts: number; timeout: boolean; causeCode: string; cause?: unknown },
  ) {
    super('NETWORK', `${call.endpoint} (${call.method} ${call.path}): ${detail}`, { cause: info.cause });
    this.endpoint = call.endpoint;
    this.method = call.method;
    this.path = call.path;
    this.timeout = info.timeout;
    this.attempts = info.attempts;
    this.causeCode = info.causeCode;
  }
}

/**
 * Why a response was refused: not JSON, not the endpoint's schema, too large, incoherent paging,
 * or a `meta.asOf` outside the window it can be in.
 */
export type InvalidResponseReason = 'not-json' | 'schema' | 'too-large' | 'paging' | 'clock';

/** A 2xx response that cannot be trusted; it never passes silently (DESIGN §4.10). */
export class InvalidResponseError extends WsmirrorError {
  readonly endpoint: string;
  readonly method: string;
  readonly path: string;
  readonly reason: InvalidResponseReason;
  constructor(call: UpstreamCall, reason: InvalidResponseReason, detail: string) {
    super('INVALID_RESPONSE', `${call.endpoint} (${call.method} ${call.path}): invalid response: ${detail}`);
    this.endpoint = call.endpoint;
    this.method = call.method;
    this.path = call.path;
    this.reason = reason;
  }
}

/**
 * A record of a list answer has no value for a field it must carry (a missing key is not a null).
 * The record pull tells this apart from other invalid answers: when upstream's fields changed
 * since the pull took its field list, the record is no fault of the answer.
 */
export class MissingFieldValueError extends InvalidResponseError {
  readonly recordId: string;
  readonly fieldName: string;
  constructor(call: UpstreamCall, recordId: string, fieldName: string) {
    super(call, 'schema', `record ${recordId} has no value for field ${JSON.stringify(fieldName)}`);
    this.recordId = recordId;
    this.fieldName = fieldName;
  }
}

/**
 * Upstream's table is no longer the one a record pull reads: its fields (or the table itself)
 * changed since the pull took its field list. The pull ends without writing what it read under
 * the new schema, and the engine pulls the schema again before it reads the table again.
 */
export class TableSchemaMovedError extends WsmirrorError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('SCHEMA_MOVED', message, options);
  }
}

/**
 * This process can no longer sync the mirror it opened: the cycle stops before it writes, and
 * `run` stops instead of going on (see the subclasses for the exit code).
 */
export class MirrorLostError extends WsmirrorError {}

/**
 * Another process took the mirror's sync lock while this one's hold on it was lost (a Postgres
 * connection ended under it, a SQLite lock file deleted). As for a lock refused at start, that
 * passes (an operator's sync ends): exit 1, and `run` lets the mirror go and waits to take it back.
 */
export class SyncLockLostError extends MirrorLostError {
  constructor(message: string) {
    super('SYNC_LOCK_LOST', message);
  }
}

/**
 * The SQLite mirror file was moved, deleted or replaced while this process had it open: writing
 * on would go to a file no reader finds at the mirror's path. Exit 1: started again (the systemd
 * unit does), wsmirror creates the mirror anew at that path, or opens the file now there.
 */
export class MirrorFileGoneError extends MirrorLostError {
  constructor(message: string) {
    super('MIRROR_FILE_GONE', message);
  }
}

/**
 * The Postgres mirror's schema, or its catalog, was dropped while this process synced it: every
 * query of every cycle would fail. Exit 1, as for a SQLite file gone: started again (the systemd
 * unit does), wsmirror makes the mirror anew in that schema.
 */
export class MirrorSchemaGoneError extends MirrorLostError {
  constructor(message: string) {
    super('MIRROR_SCHEMA_GONE', message);
  }
}

export const EXIT = { ok: 0, syncFailed: 1, usage: 2, config: 78 } as const;

/**
 * A safety valve of the sync stopped a step instead of doing something drastic, e.g. a full
 * scan that would delete more than the allowed share of a table (DESIGN §4.10).
 */
export class SafetyValveError extends WsmirrorError {
  constructor(message: string) {
    super('SAFETY_VALVE', message);
  }
}
