// The last lines of a text that keeps growing (a logs memory file across runs), for prompts:
// {{tail memory.logs 40}}. Lines left out are counted on a first line of their own.

/** The last `n` lines of `text` (a final newline ends the last line, it starts no new one). */
export function tailLines(text: string, n: number): string {
  const keep = Number.isFinite(n) ? Math.max(0, Math.floor(n)) : 0;
  const body = text.endsWith('\n') ? text.slice(0, -1) : text;
  if (body === '') return text;
  const lines = body.split('\n');
  if (lines.length <= keep) return text;
  const cut = lines.length - keep;
  const shown = lines.slice(cut).join('\n');
  return `(${cut} earlier line${cut === 1 ? '' : 's'} not shown)${keep > 0 ? `\n${shown}` : ''}${text.endsWith('\n') && keep > 0 ? '\n' : ''}`;
}
