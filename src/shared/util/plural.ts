/** `n` and the word, in the plural unless n is 1: `1 turn`, `7 turns`. */
export function count(n: number, word: string, plural = `${word}s`): string {
  return `${n} ${n === 1 ? word : plural}`;
}
