import type { FieldCreate } from '../../api/index.ts';

/** A minimal create-field object; `extra` adds or overrides properties. */
export function field(name: string, type: FieldCreate['type'], extra: Record<string, unknown> = {}): FieldCreate {
  return { name, type, labels: { '': name }, ...extra } as FieldCreate;
}

/** A `since` before anything a run makes: used with `limit=1` only, to open a poll cheaply. */
export const EPOCH = '1970-01-01T00:00:00Z';
