/**
 * Row numbers of the rows in a `RowSink`, by record id: a new id gets the next row, a repeated
 * one the row it already has, so the later row replaces the earlier (the last one wins).
 */
export class RowSlots {
  readonly ids: number[] = [];
  readonly #rowOf = new Map<number, number>();

  slot(id: number): number {
    const row = this.#rowOf.get(id);
    if (row !== undefined) return row;
    this.#rowOf.set(id, this.ids.length);
    this.ids.push(id);
    return this.ids.length - 1;
  }
}
