import type { Clock } from './clock.ts';
import type { FaultInjector } from './faults.ts';
import type { EmulatorOptions } from './options.ts';
import type { ChangeLog } from './store/change-log.ts';
import type { Db } from './store/db.ts';
import type { SchemaLookup } from './store/schema-rows.ts';
import type { StoreGate } from './store/store-gate.ts';

/** Everything a route needs, built once per server. */
export interface EmulatorContext {
  readonly db: Db;
  readonly clock: Clock;
  readonly changes: ChangeLog;
  readonly schema: SchemaLookup;
  readonly faults: FaultInjector;
  /** Held by a write that waits for I/O inside its transaction (store-gate.ts). */
  readonly gate: StoreGate;
  readonly workspaceId: string;
  readonly options: EmulatorOptions;
}
