import { isReadOnlyType, type FieldType, type Option } from '../../api/index.ts';
import type { FieldRow } from './schema-rows.ts';

/**
 * Field plans: what a records request needs to know of each field of the table (JSON path, type,
 * flags, options, referenced table), worked out once per request. The first stage of the records
 * pipeline: it imports none of the others, and the values, checks, expressions, writes and the
 * list all read it.
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
}

/** A record of a create or update request: field name → value as sent. */
export type RecordValues = Readonly<Record<string, unknown>>;

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
    list.push({
      field,
      path: `$.${field.id}`,
      type: field.type,
      readOnly: isReadOnlyType(field.type),
      required: props.required === true,
      unique: props.unique === true,
      options,
      orderedOptionIds,
      refTableKey: field.type === 'reference' && ref ? Number(ref[1]) : undefined,
    });
  }
  return { byName: new Map(list.map((p) => [p.field.name, p])), list };
}
