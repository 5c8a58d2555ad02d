/**
 * Counts distinct record ids, so a pull reports each row it wrote once: a backfill's catch-up
 * re-reads records its scan already wrote (the change feed starts before the scan), and a poll's
 * lookback repeats the last changes. Ids are kept as ranges of consecutive ids: a scan adds them
 * in ascending order and record ids are mostly dense, so a table of millions of records takes a
 * handful of ranges.
 */
export class IdTally {
  // Disjoint, sorted, non-adjacent: [first, last] pairs.
  readonly #ranges: [number, number][] = [];
  #size = 0;

  get size(): number {
    return this.#size;
  }

  /** Adds ids; returns how many were not counted before. */
  add(ids: Iterable<number>): number {
    let added = 0;
    for (const id of ids) if (this.#addOne(id)) added++;
    this.#size += added;
    return added;
  }

  #addOne(id: number): boolean {
    const ranges = this.#ranges;
    const last = ranges[ranges.length - 1];
    // The common case: ascending ids from a scan.
    if (last === undefined || id > last[1] + 1) {
      ranges.push([id, id]);
      return true;
    }
    if (id === last[1] + 1) {
      last[1] = id;
      return true;
    }
    // The last range that starts at or before id.
    let low = 0;
    let high = ranges.length - 1;
    let at = -1;
    while (low <= high) {
      const middle = (low + high) >> 1;
      if (ranges[middle]![0] <= id) {
        at = middle;
        low = middle + 1;
      } else high = middle - 1;
    }
    const before = at >= 0 ? ranges[at]! : undefined;
    if (before && id <= before[1]) return false;
    const after = ranges[at + 1];
    const joinsBefore = before !== undefined && before[1] + 1 === id;
    const joinsAfter = after !== undefined && after[0] - 1 === id;
    if (joinsBefore && joinsAfter) {
      before[1] = after[1];
      ranges.splice(at + 1, 1);
    } else if (joinsBefore) before[1] = id;
    else if (joinsAfter) after[0] = id;
    else ranges.splice(at + 1, 0, [id, id]);
    return true;
  }
}
