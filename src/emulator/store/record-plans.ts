import { isReadOnlyType, type FieldType, type Option } from '../../api/index.ts';
import { INVALID, Issues, convertValue } from './record-checks.ts';
import type { FieldRow } from './schema-rows.ts';

/**
 * Field plans: what a records request needs to know of each field of the table (JSON path, type,
 * flags, options, referenced table, literal default), worked out once per request. Separate
 * because the writes, the checks and the list all read them.
 */

export interface FieldPlan {
  readonly field: FieldRow;
  /** JSON path of the value in `data`; field ids are `f<digits>`, so the literal is safe in SQL. */
  readonly path: string;
  readonly type: FieldType;
  readonly readOnly: boolean;
  readonly required: boolean;
  readonly unique: boolean;
  /** choice/multi: option id or exact option name → option id. */
  readonly options: ReadonlyMap<string, string> | undefined;
  /** Options in display order (choice sorting). */
  readonly orderedOptionIds: readonly string[];
  /** reference: internal key of the referenced table. */
  readonly refTableKey: number | undefined;
  /** Canonical literal default, or undefined. */
  readonly defaultValue: unknown;
}

export interface FieldPlans {
  readonly byName: ReadonlyMap<string, FieldPlan>;
  readonly list: readonly FieldPlan[];
}

export function buildFieldPlans(fields: readonly FieldRow[]): FieldPlans {
  const list: FieldPlan[] = [];
  for (const field of fields) {
    if (!/^f[0-9]+$/.test(field.id)) throw new Error(`unexpected field id ${field.id}`);
    const props = field.props;
    let options: Map<string, string> | undefined;
    let orderedOptionIds: string[] = [];
    if ((field.type === 'choice' || field.type === 'multi') && Array.isArray(props.options)) {
      const opts = props.options as Option[];
      options = new Map(opts.map((o) => [o.id, o.id]));
      // An exact option name is accepted too, unless it is another option's id.
      for (const o of opts) if (!options.has(o.name)) options.set(o.name, o.id);
      orderedOptionIds = opts
        .map((o, i) => ({ o, i }))
        .sort((a, b) => (a.o.order ?? a.i) - (b.o.order ?? b.i) || a.i - b.i)
        .map(({ o }) => o.id);
    }
    const ref = /^t([0-9]+)$/.exec(props.refTableId ?? '');
    const partial = {
      field,
      path: `$.${field.id}`,
      type: field.type,
      readOnly: isReadOnlyType(field.type),
      required: props.required === true,
      unique: props.unique === true,
      options,
      orderedOptionIds,
      refTableKey: field.type === 'reference' && ref ? Number(ref[1]) : undefined,
      defaultValue: undefined as unknown,
    };
    partial.defaultValue = literalDefault(partial, props.defaultValue);
    list.push(partial);
  }
  return { byName: new Map(list.map((p) => [p.field.name, p])), list };
}

/**
 * A literal `defaultValue` in canonical form. `{ $nx }` expressions are evaluated per record by
 * record-expressions.ts, and a
 * literal that is no longer valid (say, a removed option) is ignored rather than failing creates.
 */
function literalDefault(plan: FieldPlan, value: unknown): unknown {
  if (value === undefined || value === null || plan.readOnly) return undefined;
  if (typeof value === 'object' && !Array.isArray(value)) return undefined;
  const sink = new Issues();
  const converted = convertValue(plan, value, 'create', '', sink);
  return converted === INVALID || converted === null || sink.count > 0 ? undefined : converted;
}
