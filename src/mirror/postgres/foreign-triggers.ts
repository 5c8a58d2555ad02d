import { sql, type CompiledQuery, type Kysely } from 'kysely';
import type { CatalogDb } from '../catalog-tables.ts';
import { quoteLiteral } from '../sql-text.ts';
import { CAPTURE_PREFIX } from './capture-triggers.ts';
import { mirrorRelationsSql } from './mirror-relations.ts';

/**
 * A trigger runs as the role whose statement fires it: one hung on a table of the mirror (by a
 * role with TRIGGER on it, which GRANT ALL gives) runs as the daemon's role when the daemon writes
 * that table, and may write the outbox, whose entries go upstream with the API key. A trigger is
 * the daemon's own when its function is wsmirror's capture function, or is owned by the daemon's
 * role and executable by no other role: EXECUTE on the function is needed to create the trigger,
 * so only the daemon's role (or a superuser) can have made it. Every other trigger is foreign.
 */

/**
 * The foreign triggers of the tables in `schema`, as rows of (table, trigger, fn, owner, role),
 * `role` being the session's, among the triggers `triggers` gives (a FROM item naming pg_trigger
 * `t`): `firedTriggers` or `mirrorTriggers`. Both reach pg_trigger and pg_class by their indexes,
 * from the few relations they name: read whole, the two catalogs cost in proportion to every
 * table of the database (14 ms a read in one of 10,000 relations), at every commit and cycle.
 */
function foreignTriggersSql(schemaLiteral: string, triggers: string): string {
  return `SELECT DISTINCT c.relname::text AS "table", t.tgname::text AS "trigger", p.oid::pg_catalog.regprocedure::text AS fn,
      pg_catalog.pg_get_userbyid(p.proowner)::text AS owner, current_user::text AS role
    FROM ${triggers} JOIN pg_catalog.pg_class c ON c.oid = t.tgrelid
    JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace JOIN pg_catalog.pg_proc p ON p.oid = t.tgfoid
    WHERE n.nspname = ${schemaLiteral} AND NOT t.tgisinternal
      AND NOT (p.pronamespace = n.oid AND pg_catalog.starts_with(p.proname, ${quoteLiteral(CAPTURE_PREFIX)}))
      AND NOT (pg_catalog.pg_get_userbyid(p.proowner) = current_user AND NOT EXISTS (
        SELECT 1 FROM pg_catalog.aclexplode(coalesce(p.proacl, pg_catalog.acldefault('f', p.proowner))) a
        WHERE a.grantee <> p.proowner AND a.privilege_type = 'EXECUTE'))
    ORDER BY 1, 2`;
}

/**
 * The triggers that fire on the tables this transaction wrote, as its locks tell: every row write
 * (INSERT, UPDATE, DELETE, MERGE, COPY) takes ROW EXCLUSIVE on its table, TRUNCATE takes ACCESS
 * EXCLUSIVE and fires only TRUNCATE triggers. DDL, which fires no trigger (the capture triggers and
 * views of a table that references one a schema change touches are made again), takes stronger
 * locks and no ROW EXCLUSIVE: it passes.
 */
function firedTriggers(): string {
  return `(SELECT DISTINCT l.relation, l.mode FROM pg_catalog.pg_locks l WHERE l.pid = pg_catalog.pg_backend_pid()
      AND l.locktype = 'relation' AND l.mode IN ('RowExclusiveLock', 'AccessExclusiveLock')) w
    JOIN pg_catalog.pg_trigger t ON t.tgrelid = w.relation AND (w.mode = 'RowExclusiveLock' OR t.tgtype & ${TRIGGER_TYPE_TRUNCATE} <> 0)`;
}

/** The triggers of the mirror's tables in `schema`: those its catalog names, and its catalog's own (`_wsmirror_*`). */
function mirrorTriggers(schema: string): string {
  return `${mirrorRelationsSql(schema)} JOIN pg_catalog.pg_trigger t ON t.tgrelid = w.relation`;
}

/** pg_trigger.tgtype's bit of a TRUNCATE trigger (TRIGGER_TYPE_TRUNCATE in PostgreSQL's trigger.h). */
const TRIGGER_TYPE_TRUNCATE = 32;

/** The message naming a foreign trigger, what it could do and how to drop it (SQL: `format` arguments are its columns). */
function messageFormat(): { text: string; args: string[] } {
  return {
    text: 'table %s.%s carries trigger %s (function %s, owned by role %s), which wsmirror did not make: the daemon\'s writes of the table '
      + 'would run it as role %s, and an outbox entry it wrote would go upstream with the API key; the table '
      + 'is held back until the trigger is gone: DROP TRIGGER %s ON %s.%s (a trigger of role %s\'s own, on a function no other role may '
      + 'execute, may stay: REVOKE ALL ON FUNCTION %s FROM PUBLIC)',
    args: ['schema', 'r."table"', 'r."trigger"', 'r.fn', 'r.owner', 'r.role', 'pg_catalog.quote_ident(r."trigger")', 'pg_catalog.quote_ident(schema)', 'pg_catalog.quote_ident(r."table")', 'r.role', 'r.fn'],
  };
}

/**
 * Run before the daemon's COMMIT: fails the transaction (undoing what any trigger wrote in it)
 * when a table it wrote carries a foreign trigger. A trigger cannot be added to a table, nor
 * dropped from it, while the transaction holds its write lock, so what fired in it is still there.
 * The cycle holds such tables back beforehand (the catalog read lists them, `foreignTriggersQuery`),
 * so this fails only a write of a trigger added since, or of a `_wsmirror_*` table's.
 */
export function foreignTriggerGuardSql(schema: string): string {
  const { text, args } = messageFormat();
  const body = `DECLARE r record; schema text := ${quoteLiteral(schema)};
BEGIN
  FOR r IN ${foreignTriggersSql('schema', firedTriggers())} LIMIT 1 LOOP
    RAISE EXCEPTION USING ERRCODE = 'insufficient_privilege', MESSAGE = pg_catalog.format(${quoteLiteral(`wsmirror: nothing was written: ${text}`)}, ${args.join(', ')});
  END LOOP;
END`;
  let tag = '$guard$';
  for (let i = 0; body.includes(tag); i++) tag = `$guard${i}$`;
  return `DO ${tag}${body}${tag}`;
}

/**
 * The foreign triggers of the mirror in `schema`, one row each: its table's name and a message
 * naming the trigger and what to do. Reads only; runs in the catalog read's snapshot.
 */
export function foreignTriggersQuery(db: Kysely<CatalogDb>, schema: string): CompiledQuery<{ table: string; message: string }> {
  const { text, args } = messageFormat();
  return sql<{ table: string; message: string }>`SELECT r."table", pg_catalog.format(${text}, ${sql.raw(args.join(', '))}) AS message
    FROM (SELECT ${schema}::text AS schema) s CROSS JOIN LATERAL (${sql.raw(foreignTriggersSql('s.schema', mirrorTriggers(schema)))}) r`.compile(db);
}

/** The same, run (`wsmirror check`). */
export async function foreignTriggers(db: Kysely<CatalogDb>, schema: string): Promise<{ table: string; message: string }[]> {
  return (await db.executeQuery(foreignTriggersQuery(db, schema))).rows;
}
