// "Did you mean ...?": the known name closest to a mistyped one.

/** Edit distance (insertions, deletions, substitutions, swaps of neighbours) between a and b. */
function distance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++)
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  return d[a.length]![b.length]!;
}

/** The name of `known` closest to `name` (case aside), when it is close enough to be a typo of it. */
export function closestName(name: string, known: readonly string[]): string | undefined {
  let best: { name: string; d: number } | undefined;
  for (const k of known) {
    const d = distance(name.toLowerCase(), k.toLowerCase());
    if (best === undefined || d < best.d) best = { name: k, d };
  }
  return best !== undefined && best.d <= Math.max(1, Math.floor(Math.max(name.length, best.name.length) / 3)) ? best.name : undefined;
}

/** Up to `n` names of `known` closest to `name` (case aside), closest first; ties in the order given. */
export function closestNames(name: string, known: readonly string[], n = 3): string[] {
  return known
    .map((k, i) => ({ k, i, d: distance(name.toLowerCase(), k.toLowerCase()) }))
    .sort((a, b) => a.d - b.d || a.i - b.i)
    .slice(0, n)
    .map((x) => x.k);
}
