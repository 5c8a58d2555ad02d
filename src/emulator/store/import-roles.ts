import type { CsvImportMode } from '../../api/index.ts';
import type { EmulatorContext } from '../context.ts';
import { ForbiddenError } from '../errors.ts';
import type { ApiKeyGrant } from '../options.ts';
import type { TableRow } from './schema-rows.ts';
import { roleOf, tableRoleRefusal, type RecordAction } from './table-roles.ts';

/**
 * The role lists a CSV import meets: those of the records requests it stands for. An update
 * looks records up by key before it writes them, and its counts (updated or skipped) tell
 * whether a key exists, so it needs `read` as well as `write`; an upsert does all three.
 */
const ACTIONS: Record<CsvImportMode, readonly RecordAction[]> = {
  append: ['create'],
  update: ['read', 'write'],
  upsert: ['create', 'read', 'write'],
};

function refusal(ctx: EmulatorContext, table: TableRow, role: string, mode: CsvImportMode): string | undefined {
  for (const action of ACTIONS[mode]) {
    const why = tableRoleRefusal(ctx, table, role, action);
    if (why !== undefined) return why;
  }
  return undefined;
}

/**
 * 403 unless the key's role may import in `mode`. Without a mode (the form not read yet), 403
 * unless it may import in some mode: a key refused in every one is told so before its file is
 * uploaded, with the refusal of the default mode, append.
 */
export function requireImportRoles(ctx: EmulatorContext, table: TableRow, actor: ApiKeyGrant, mode?: CsvImportMode): void {
  const role = roleOf(actor);
  const modes: readonly CsvImportMode[] = mode === undefined ? ['append', 'update'] : [mode];
  const refusals = modes.map((m) => refusal(ctx, table, role, m));
  if (refusals.every((r) => r !== undefined)) throw new ForbiddenError(refusals[0]!);
}
