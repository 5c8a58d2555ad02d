import type { FieldProps } from './schema-rows.ts';

/**
 * Stored field properties are kept in one fixed order, so that the answers list them the same
 * way whichever request wrote them last, and two saves compare by their JSON text.
 */

const PROPERTY_ORDER = [
  'labels', 'variant', 'required', 'unique', 'index', 'search', 'defaultValue', 'onUpdate', 'options', 'optionName',
  'optionIcon', 'optionColor', 'expression', 'expressionErrors', 'refTableId', 'readRoles', 'writeRoles', 'canRead',
  'canWrite', 'syncedFrom', 'binding',
] as const satisfies readonly (keyof FieldProps)[];

/** Stored field properties in the fixed order, without undefined entries. */
export function orderedProps(props: FieldProps): FieldProps {
  const out: Record<string, unknown> = {};
  for (const key of PROPERTY_ORDER) if (props[key] !== undefined) out[key] = props[key];
  return out as FieldProps;
}
