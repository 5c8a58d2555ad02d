// Small figures helpers shared by the bench scenarios.

/** Median of a sample (the figure benches report, robust to a noisy shared machine). */
export function median(values: readonly number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** A number rounded for a report. */
export const round = (n: number, digits = 2) => Number(n.toFixed(digits));
