/**
 * The search path of every session wsmirror opens and of the capture functions it creates.
 * A call resolves to the closest match among every schema on the path, not to the first schema
 * holding the name: a role with CREATE on a schema of the path (every role on `public` before
 * PostgreSQL 15, and on databases upgraded from one) can write a function that matches a call
 * better than pg_catalog's own (`pg_advisory_xact_lock(integer)` where pg_catalog has `bigint`
 * only; `lower(tstzrange)` where pg_catalog's is polymorphic), and whoever makes the call runs it
 * with their rights. A view binds its calls when made, so one made on such a path runs the
 * planted function for every reader. With pg_catalog alone (pg_temp last: it is searched for
 * tables only, here the staging tables), nothing another role creates can stand in for a
 * function; the mirror's own objects are always named with their schema.
 */
export const SEARCH_PATH = 'pg_catalog, pg_temp';

/** A plain SET: it looks nothing up, so it is safe as a session's first statement. */
export const SET_SEARCH_PATH_SQL = `SET search_path = ${SEARCH_PATH}`;
