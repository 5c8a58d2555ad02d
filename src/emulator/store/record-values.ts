import type * as z from 'zod';
import {
  ASK_SCHEMA, describeIssues, recordValueSchema, recordValueShortcut, type Option, type RecordValueShortcut, type ValueMode,
} from '../../api/index.ts';
import { BadRequestError } from '../errors.ts';
import type { FieldPlan, FieldPlans } from './record-plans.ts';

/**
 * One value of a records request on its way to the store: the Issues collector behind every 400,
 * the conversion of a value to its stored form (shape, canonical form, the field's own options),
 * and the literal defaults in that form. The first stage after the field plans; the checks of a
 * whole request (record-checks.ts) and the expression stages come after it.
 */

// ---- issues ----------------------------------------------------------------------------------

export const MAX_REPORTED = 20;

/** Collects every validation failure of a request; the 400 names up to 20 of them. */
export class Issues {
  readonly list: string[] = [];
  count = 0;
  add(message: string): void {
    this.count++;
    if (this.list.length < MAX_REPORTED) this.list.push(message);
  }
  throwIfAny(): void {
    if (this.count === 0) return;
    const more = this.count > this.list.length ? `; and ${this.count - this.list.length} more` : '';
    throw new BadRequestError(this.list.join('; ') + more);
  }
}

// ---- values ----------------------------------------------------------------------------------

export const INVALID = Symbol('invalid');

export function isEmpty(value: unknown): boolean {
  return value === null || value === undefined || value === '' || (Array.isArray(value) && value.length === 0);
}

function optionList(plan: FieldPlan): string {
  const opts = (plan.field.props.options as Option[] | undefined) ?? [];
  const shown = opts.slice(0, 10).map((o) => `${o.id} (${JSON.stringify(o.name)})`);
  if (opts.length > 10) shown.push('…');
  return shown.length === 0 ? 'the field has no options' : `options: ${shown.join(', ')}`;
}

/** Names a value in an error message: a path, or the place of a record's field (record-checks.ts). */
export type ValuePlace = string | ((index: number, fieldName?: string) => string);

function placeOf(where: ValuePlace, index: number, fieldName: string | undefined): string {
  return typeof where === 'string' ? where : where(index, fieldName);
}

/**
 * One field's values of one mode through the value table (shape, canonical form) and the field's
 * own options. Made once per request (or import) and field; converting a valid value allocates
 * nothing beyond the value, and the place of a value is worked out only for a fault.
 */
export class ValueConverter {
  readonly plan: FieldPlan;
  readonly #schema: z.ZodType;
  readonly #shortcut: RecordValueShortcut | undefined;

  constructor(plan: FieldPlan, mode: ValueMode) {
    this.plan = plan;
    this.#schema = recordValueSchema(plan.type, mode);
    this.#shortcut = recordValueShortcut(plan.type);
  }

  /** The stored form of `raw`, or INVALID with the fault added to `issues`. */
  convert(raw: unknown, issues: Issues, where: ValuePlace, index = 0, fieldName?: string): unknown {
    let value = this.#shortcut ? this.#shortcut(raw) : ASK_SCHEMA;
    if (value === ASK_SCHEMA) {
      const parsed = this.#schema.safeParse(raw);
      if (!parsed.success) {
        issues.add(describeIssues(parsed.error.issues, placeOf(where, index, fieldName)));
        return INVALID;
      }
      value = parsed.data;
    }
    if (value === null) return null;
    const plan = this.plan;
    switch (plan.type) {
      case 'choice': {
        const id = plan.options?.get(value as string);
        if (id === undefined) {
          issues.add(`${placeOf(where, index, fieldName)}: ${JSON.stringify(value)} is not an option of field ${plan.field.name} (${optionList(plan)})`);
          return INVALID;
        }
        return id;
      }
      case 'multi': {
        const ids: string[] = [];
        for (const item of value as string[]) {
          const id = plan.options?.get(item);
          if (id === undefined) {
            issues.add(`${placeOf(where, index, fieldName)}: ${JSON.stringify(item)} is not an option of field ${plan.field.name} (${optionList(plan)})`);
            return INVALID;
          }
          if (ids.includes(id)) {
            issues.add(`${placeOf(where, index, fieldName)}: option ${id} appears more than once`);
            return INVALID;
          }
          ids.push(id);
        }
        return ids;
      }
      case 'dmulti':
        if (new Set(value as string[]).size !== (value as string[]).length) {
          issues.add(`${placeOf(where, index, fieldName)}: a record id appears more than once`);
          return INVALID;
        }
        return value;
      default:
        return value;
    }
  }
}

/** One value through its field's converter, for callers that convert a value now and then. */
export function convertValue(plan: FieldPlan, raw: unknown, mode: ValueMode, where: string, issues: Issues): unknown {
  return new ValueConverter(plan, mode).convert(raw, issues, where);
}

// ---- literal defaults ------------------------------------------------------------------------

/**
 * Literal `defaultValue`s in canonical form, by field id, worked out once per request. `{ $nx }`
 * defaults are evaluated per record (record-expressions.ts); a literal that is no longer valid
 * (say, a removed option) is left out rather than failing creates.
 */
export function literalDefaults(plans: FieldPlans): ReadonlyMap<string, unknown> {
  const out = new Map<string, unknown>();
  for (const plan of plans.list) {
    const value = plan.field.props.defaultValue;
    if (value === undefined || value === null || plan.readOnly) continue;
    if (typeof value === 'object' && !Array.isArray(value)) continue;
    const sink = new Issues();
    const converted = convertValue(plan, value, 'create', '', sink);
    if (converted !== INVALID && converted !== null && sink.count === 0) out.set(plan.field.id, converted);
  }
  return out;
}
