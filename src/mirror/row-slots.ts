/**
 * Row numbers of the rows in a `RowSink`, by record id: a new id gets the next row, a repeated
 * one the row it already has, so the later row replaces the earlier (the last one wins).
 *
 * A scan hands out ids in ascending order: while they ascend, a new id is just appended and a
 * repeat is found by binary search, with no map. A batch of 2,000 rows otherwise grew a map of
 * 2,000 entries that lived as long as the batch, and most of them reached the old generation.
 * The first id out of order (a change feed) indexes every row in a map from then on.
 */
export class RowSlots {
  readonly ids: number[] = [];
  #rowOf: Map<number, number> | undefined;

  slot(id: number): number {
    const ids = this.ids;
    const count = ids.length;
    if (this.#rowOf === undefined) {
      if (count === 0 || id > ids[count - 1]!) {
        ids.push(id);
        return count;
      }
      const at = ascendingIndexOf(ids, id);
      if (at >= 0) return at;
      this.#rowOf = new Map(ids.map((known, row) => [known, row]));
    }
    const row = this.#rowOf.get(id);
    if (row !== undefined) return row;
    this.#rowOf.set(id, count);
    ids.push(id);
    return count;
  }
}

/** Index of `id` in the ascending `ids`, or -1. */
function ascendingIndexOf(ids: readonly number[], id: number): number {
  let low = 0;
  let high = ids.length - 1;
  while (low <= high) {
    const middle = (low + high) >> 1;
    const known = ids[middle]!;
    if (known === id) return middle;
    if (known < id) low = middle + 1;
    else high = middle - 1;
  }
  return -1;
}
