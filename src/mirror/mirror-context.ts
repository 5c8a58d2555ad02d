import type { MirrorField, MirrorTable } from './catalog.ts';
import type { Dialect } from './dialect.ts';
import type { DialectDriver } from './dialect-driver.ts';
import { MirrorError } from './errors.ts';
import type { MirrorLogger } from './mirror-logger.ts';

/** A mirrored table and its fields (in upstream order), as the last catalog read found them. */
export interface TableInfo {
  table: MirrorTable;
  fields: MirrorField[];
  /** Its SQL table was not in the database (dropped outside wsmirror): nothing reads or writes its rows. */
  missing: boolean;
  /** It carries a trigger wsmirror did not make (`Catalog.foreignTriggers`): the daemon writes none of its rows. */
  foreignTrigger: boolean;
}

/**
 * What every mirror operation works with: the open connection, its dialect, the logger, and the
 * tables of the last catalog read (dropped whenever the catalog may have changed).
 */
export interface MirrorContext {
  readonly driver: DialectDriver;
  readonly dialect: Dialect;
  readonly logger: MirrorLogger | undefined;
  /** Tables by upstream id; undefined until read, and after anything that changes the catalog. */
  tables: Map<string, TableInfo> | undefined;
  closed: boolean;
}

export function createContext(dialect: Dialect, driver: DialectDriver, logger: MirrorLogger | undefined): MirrorContext {
  return { driver, dialect, logger, tables: undefined, closed: false };
}

export function assertOpen(ctx: MirrorContext): void {
  if (ctx.closed) throw new MirrorError('the mirror is closed');
}
