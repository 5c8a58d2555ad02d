import type { Clock } from './clock.ts';
import type { FaultInjector } from './faults.ts';
import type { EmulatorOptions } from './options.ts';
import type { ChangeLog } from './store/change-log.ts';
import type { Db } from './store/database.ts';
import type { SchemaLookup } from './store/schema-rows.ts';

/** Everything a route needs, built once per server. */
export interface EmulatorContext {
  readonly db: Db;
  readonly clock: Clock;
  readonly changes: ChangeLog;
  readonly schema: SchemaLookup;
  readonly faults: FaultInjector;
  readonly workspaceId: string;
  readonly options: EmulatorOptions;
}
