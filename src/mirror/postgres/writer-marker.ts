import type { SqlNames } from '../sql-text.ts';
import { quoteLiteral } from '../sql-text.ts';

/**
 * How Postgres tells the daemon's writes from everyone else's: a transaction-local setting the
 * daemon sets at the start of each of its write transactions (gone at commit or rollback).
 */
export const WRITER_SETTING = 'wsmirror.writer';

/**
 * True inside the daemon's own write transactions only. Any session can set the setting (a
 * placeholder no privilege guards), so it counts only for a role that may write the outbox
 * itself: the daemon's, which owns it. A writer without that right (the least-privilege set-up,
 * config/README.md) is captured and guarded whatever it sets; one with it could write entries
 * of its own anyway. The right is the current role's: evaluate this where the editing statement
 * runs (a trigger's WHEN clause), never inside a SECURITY DEFINER function, where it is the
 * function owner's. The outbox is named by its oid, fixed when the trigger is made, so a renamed
 * schema keeps it; every call is qualified, since a WHEN clause binds its calls then too.
 */
export function daemonWriteCondition(names: SqlNames): string {
  const outbox = quoteLiteral(names.qualify('_wsmirror_outbox'));
  return `coalesce(pg_catalog.current_setting('${WRITER_SETTING}', true), '') = 'daemon'`
    + ` AND pg_catalog.has_table_privilege(${outbox}::regclass, 'INSERT')`;
}
