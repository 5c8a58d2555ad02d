import { NotFoundError } from '../errors.ts';

/**
 * Public ids of schema objects: a kind letter and the internal integer key
 * (`m1` module, `t3` table, `f12` field, `o5` option). Record ids are plain integers.
 */
export const ID_PREFIX = { module: 'm', table: 't', field: 'f', option: 'o' } as const;
export type ObjectKind = keyof typeof ID_PREFIX;

export function publicId(kind: ObjectKind, key: number): string {
  return `${ID_PREFIX[kind]}${key}`;
}

export function internalKey(kind: ObjectKind, id: string): number {
  const prefix = ID_PREFIX[kind];
  if (!id.startsWith(prefix) || !/^[0-9]+$/.test(id.slice(1))) throw new NotFoundError(`${kind} ${id} not found`);
  return Number(id.slice(1));
}
