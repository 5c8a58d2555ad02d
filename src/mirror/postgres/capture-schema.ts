import { sql, type Kysely } from 'kysely';
import type { CatalogDb } from '../catalog-tables.ts';
import { CAPTURE_PREFIX, OWN_TABLE_TEST, ownTableTestIn } from './capture-triggers.ts';

/**
 * The functions that write the outbox name the mirror's schema in their text (their own table,
 * the outbox): a schema renamed since (`ALTER SCHEMA … RENAME`, or a dump restored under another
 * name) leaves them naming the old one, and every edit then fails (`schema … does not exist`),
 * or, with a schema of the old name still there, is refused as another table's. True when a
 * capture function of the mirror in `schema` names its table under another schema
 * (DialectDriver.captureMadeElsewhere).
 */
export async function captureNamesAnotherSchema(db: Kysely<CatalogDb>, schema: string): Promise<boolean> {
  const { rows } = await sql<{ other: boolean }>`SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_proc p
    JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
    WHERE n.nspname = ${schema} AND pg_catalog.starts_with(p.proname, ${CAPTURE_PREFIX})
      AND pg_catalog.strpos(p.prosrc, ${OWN_TABLE_TEST}) > 0
      AND pg_catalog.strpos(p.prosrc, ${ownTableTestIn(schema)}) = 0) AS other`.execute(db);
  return rows[0]?.other === true;
}
