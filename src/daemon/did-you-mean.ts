/**
 * The known name closest to a misspelt one: same letters ignoring case, `-` and `_`, else at most
 * two edits away. Used for unknown keys of the configuration file and unknown `WSMIRROR_*`
 * variables.
 */
export function closestName(name: string, known: readonly string[]): string | undefined {
  const squash = (s: string) => s.toLowerCase().replace(/[-_]/g, '');
  const wanted = squash(name);
  const same = known.find((k) => squash(k) === wanted);
  if (same !== undefined) return same;
  let best: { name: string; distance: number } | undefined;
  for (const candidate of known) {
    const distance = editDistance(squash(candidate), wanted);
    if (distance <= 2 && (best === undefined || distance < best.distance)) best = { name: candidate, distance };
  }
  return best?.name;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current.push(Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + cost));
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}
