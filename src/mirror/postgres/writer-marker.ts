/**
 * How Postgres tells the daemon's writes from everyone else's: a transaction-local setting the
 * daemon sets at the start of each of its write transactions (gone at commit or rollback).
 */
export const WRITER_SETTING = 'wsmirror.writer';

/**
 * True inside the daemon's own write transactions only. Qualified: a trigger's WHEN clause binds
 * its calls when the trigger is made.
 */
export const DAEMON_WRITE_CONDITION = `coalesce(pg_catalog.current_setting('${WRITER_SETTING}', true), '') = 'daemon'`;
