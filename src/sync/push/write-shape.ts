import type { FieldType } from '../../api/field-types.ts';

/**
 * The few places where the shape the API returns (what the mirror's codec decodes a column to)
 * is not the shape it accepts in a request body (spec, "Value shapes by field type"). Every
 * other type is sent exactly as read.
 *
 * - icon: reads give the bare icon name, or a JSON-encoded `{icon,color,filling}` string when a
 *   color or filling is set. Updates accept only the JSON-encoded object, creates only a name.
 *
 * Values the API cannot take in an operation at all (a timeinterval `HH:MM-HH:MM` on update,
 * `HH:MM:SS` on create) are sent as they are: the upstream's 400 message marks the edit failed,
 * visible in the outbox, instead of wsmirror guessing a conversion.
 */
export function toRequestValue(type: FieldType | string, value: unknown, operation: 'create' | 'update'): unknown {
  if (type === 'icon' && typeof value === 'string') {
    const object = parseIconObject(value);
    if (operation === 'update') return object === undefined ? JSON.stringify({ icon: value }) : value;
    // A create takes a name: an object that holds nothing but the name becomes the name.
    if (object !== undefined && Object.keys(object).length === 1) return object.icon;
  }
  return value;
}

function parseIconObject(text: string): { icon: string } | undefined {
  if (!text.startsWith('{')) return undefined;
  try {
    const parsed = JSON.parse(text) as unknown;
    if (typeof parsed === 'object' && parsed !== null && typeof (parsed as { icon?: unknown }).icon === 'string') {
      return parsed as { icon: string };
    }
  } catch {
    // not JSON: a name that starts with a brace
  }
  return undefined;
}
