import type { FieldType } from '../../api/field-types.ts';
import type { RecordUpdateInput } from '../../client/index.ts';

/**
 * The key an update record carries the record's id under (spec, Records: "update records also
 * carry `id`"). A field may have that name too: a create sets it (its body is field name to
 * value), an update never can, since the key is the record's.
 */
const UPDATE_RECORD_ID_KEY = 'id';

/** Why the API's update cannot set the field `fieldName`, or undefined when it can. */
export function whyUpdateCannotSet(fieldName: string): string | undefined {
  if (fieldName !== UPDATE_RECORD_ID_KEY) return undefined;
  return `${fieldName}: an update cannot set a field named "id": the API's update record carries the record's id under "id"; `
    + 'the edit was not sent (set the value upstream another way, then discard this entry; a row inserted here sends it with its create)';
}

/** The record of an update request: the fields to set, and the record's id. */
export function updateRecord(recordId: number, body: Readonly<Record<string, unknown>>): RecordUpdateInput[number] {
  // The push leaves such fields out (settable-updates.ts): one here would be overwritten by the id, and lost.
  if (Object.hasOwn(body, UPDATE_RECORD_ID_KEY)) throw new Error(`update of record ${recordId} sets the field "${UPDATE_RECORD_ID_KEY}", which an update cannot carry`);
  return { ...body, [UPDATE_RECORD_ID_KEY]: recordId };
}

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
