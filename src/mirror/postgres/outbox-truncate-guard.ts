import { sql, type Kysely } from 'kysely';
import type { CatalogDb } from '../catalog-tables.ts';
import { quoteIdent } from '../sql-text.ts';
import { SEARCH_PATH } from './search-path.ts';

const OUTBOX = '_wsmirror_outbox';
const TRIGGER = '_wsmirror_outbox_truncate';
/** Not of the capture prefix: it serves no mirrored table. */
const FUNCTION = '_wsmirror_outbox_truncate_guard';

/**
 * Row-level security (catalog-row-security.ts) does not cover TRUNCATE: a role granted it on the
 * outbox (`GRANT ALL ON ALL TABLES IN SCHEMA`) could empty it, dropping every edit not yet
 * pushed, before the next cycle revokes the right (table-grants.ts). A BEFORE TRUNCATE trigger
 * refuses it to every role but the table's owner (superusers pass, as they pass every privilege).
 * Its function is the daemon's role's and executable by no other role, so the foreign-trigger
 * guard counts it as the daemon's own (foreign-triggers.ts); a trigger function runs without
 * EXECUTE on it, as the role whose statement fires it.
 *
 * On an open for writing: made where it is missing (a mirror made by an older version), EXECUTE
 * taken back from PUBLIC where a restore granted it; one catalog read otherwise. A function of
 * that name another role owns is left as it is: the foreign-trigger guard names it.
 */
export async function guardOutboxTruncate(db: Kysely<CatalogDb>, schema: string): Promise<void> {
  const { rows: [state] } = await sql<{ owned: boolean; trigger: boolean; fn: boolean; fnOwned: boolean; fnShared: boolean }>`SELECT
      pg_catalog.pg_has_role(current_user, c.relowner, 'USAGE') AS owned,
      EXISTS (SELECT 1 FROM pg_catalog.pg_trigger t WHERE t.tgrelid = c.oid AND t.tgname = ${TRIGGER}) AS trigger,
      p.oid IS NOT NULL AS fn, coalesce(p.proowner = (SELECT r.oid FROM pg_catalog.pg_roles r WHERE r.rolname = current_user), false) AS "fnOwned",
      coalesce(EXISTS (SELECT 1 FROM pg_catalog.aclexplode(coalesce(p.proacl, pg_catalog.acldefault('f', p.proowner))) a
        WHERE a.grantee <> p.proowner AND a.privilege_type = 'EXECUTE'), false) AS "fnShared"
    FROM pg_catalog.pg_class c
    LEFT JOIN pg_catalog.pg_proc p ON p.oid = pg_catalog.to_regprocedure(pg_catalog.format('%I.%I()', ${schema}::text, ${FUNCTION}::text))
    WHERE c.oid = pg_catalog.to_regclass(pg_catalog.format('%I.%I', ${schema}::text, ${OUTBOX}::text))`.execute(db);
  // Another role's outbox: the open fails elsewhere, naming it.
  if (state === undefined || !state.owned || (state.fn && !state.fnOwned)) return;
  if (state.trigger && state.fn && !state.fnShared) return;
  const fn = `${quoteIdent(schema)}.${quoteIdent(FUNCTION)}`;
  const statements = [];
  if (!state.fn) {
    statements.push(`CREATE FUNCTION ${fn}() RETURNS trigger LANGUAGE plpgsql SET search_path = ${SEARCH_PATH} AS $guard$
BEGIN
  IF NOT pg_catalog.pg_has_role(current_user, (SELECT c.relowner FROM pg_catalog.pg_class c WHERE c.oid = TG_RELID), 'USAGE') THEN
    RAISE EXCEPTION USING ERRCODE = 'insufficient_privilege', MESSAGE = pg_catalog.format(
      'wsmirror: TRUNCATE of %I.%I by role %s refused: it would drop every local edit not yet pushed; only the table''s owner may empty it',
      TG_TABLE_SCHEMA, TG_TABLE_NAME, current_user);
  END IF;
  RETURN NULL;
END $guard$`);
  }
  statements.push(`REVOKE ALL ON FUNCTION ${fn}() FROM PUBLIC`);
  if (!state.trigger) {
    statements.push(`CREATE TRIGGER ${quoteIdent(TRIGGER)} BEFORE TRUNCATE ON ${quoteIdent(schema)}.${quoteIdent(OUTBOX)}
      FOR EACH STATEMENT EXECUTE FUNCTION ${fn}()`);
  }
  await sql.raw(statements.join(';\n')).execute(db);
}
