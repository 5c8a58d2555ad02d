import * as z from 'zod';
import {
  describeIssues, fieldCreateSchema, recordValuesSchema, tableCreateSchema, tablePatchSchema, type FieldCreate,
} from '../api/index.ts';
import { moduleCreateSchema } from './admin-contract.ts';
import type { EmulatorContext } from './context.ts';
import { ApiError, BadRequestError } from './errors.ts';
import { TRUSTED, createFields } from './store/field-store.ts';
import { createRecords } from './store/record-store.ts';
import type { TableRow } from './store/schema-rows.ts';
import { createModule, createTable, setWorkspaceName } from './store/schema-store.ts';

/**
 * A seed field: a create-field object whose `labels` may be left out, then `{"": name}`. Labels
 * are display text a test workspace rarely cares about; the API itself requires them.
 */
const seedFieldSchema = z.preprocess((value) => {
  if (typeof value !== 'object' || value === null || Array.isArray(value) || Object.hasOwn(value, 'labels')) return value;
  const { name } = value as { name?: unknown };
  return typeof name === 'string' ? { ...value, labels: { '': name } } : value;
}, fieldCreateSchema);

/**
 * A seed: the shape of the workspace response without ids, each table's fields as create-field
 * objects (`labels` optional), plus optional flat `records` per table.
 */
const seedTableSchema = tableCreateSchema.extend({
  createRoles: tablePatchSchema.shape.createRoles,
  deleteRoles: tablePatchSchema.shape.deleteRoles,
  readRoles: tablePatchSchema.shape.readRoles,
  writeRoles: tablePatchSchema.shape.writeRoles,
  fields: z.array(seedFieldSchema).optional(),
  records: z.array(recordValuesSchema).optional(),
});

const seedModuleSchema = moduleCreateSchema.extend({ tables: z.array(seedTableSchema).optional() });

export const seedSchema = z.strictObject({
  name: z.string().min(1, 'the workspace name must not be empty').optional(),
  modules: z.array(seedModuleSchema).optional(),
});
export type Seed = z.output<typeof seedSchema>;

/** Validates a seed's shape; a failure names the place at fault (`seed.modules[0].tables[1]…`). */
export function parseSeed(value: unknown, root = 'seed'): Seed {
  const result = seedSchema.safeParse(value);
  if (!result.success) throw new BadRequestError(describeIssues(result.error.issues, root));
  return result.data;
}

/** Runs one step of the load; an error is re-thrown with the seed path in front. */
function at<T>(where: string, step: () => T): T {
  try {
    return step();
  } catch (error) {
    if (error instanceof ApiError) {
      // Store errors that already name a place under `where` keep it; others get it in front.
      const message = error.message.startsWith(where) ? error.message : `${where}: ${error.message}`;
      throw new BadRequestError(message);
    }
    throw error;
  }
}

/**
 * Loads a parsed seed through the same store functions the routes use, in one transaction: all
 * modules, then all tables (so references may point at tables defined later), then each table's
 * fields, then records in seed order.
 */
export function applySeed(ctx: EmulatorContext, seed: Seed, root = 'seed'): void {
  ctx.db.transaction(() => {
    if (seed.name !== undefined && ctx.options.workspaceName === undefined) setWorkspaceName(ctx, seed.name);
    const modules = seed.modules ?? [];
    modules.forEach((m, mi) => {
      const { tables: _tables, ...module } = m;
      at(`${root}.modules[${mi}]`, () => createModule(ctx, module));
    });
    const created = modules.flatMap((m, mi) =>
      (m.tables ?? []).map((t, ti) => {
        const where = `${root}.modules[${mi}].tables[${ti}]`;
        const { fields: _fields, records: _records, ...table } = t;
        return { seed: t, where, row: at(where, () => createTable(ctx, m.name, table)) };
      }),
    );
    for (const { seed: t, where, row } of created) {
      const fields = t.fields ?? [];
      if (fields.length > 0) createFieldsAt(ctx, row, fields, where);
    }
    for (const { seed: t, where, row } of created) {
      if (!t.records || t.records.length === 0) continue;
      at(where, () => createRecords(ctx, row, ctx.schema.fieldsOf(row.key), t.records!, `${where}.records`));
    }
  })();
}

function createFieldsAt(ctx: EmulatorContext, row: TableRow, fields: readonly FieldCreate[], where: string): void {
  at(`${where}.fields`, () => createFields(ctx, row, fields, { actor: TRUSTED, at: (i) => `${where}.fields[${i}]` }));
}

/** Validates and loads a `--seed` workspace (or an admin seed body) into the store. */
export function loadSeed(ctx: EmulatorContext, value: unknown, root = 'seed'): Seed {
  const seed = parseSeed(value, root);
  applySeed(ctx, seed, root);
  return seed;
}
