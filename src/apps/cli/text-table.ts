// A plain text table: columns as wide as their widest cell, each left- or right-aligned.

/** One line per row, the head first; `right[i]`: column i is right-aligned. The last left-aligned column is not padded. */
export function textTable(head: string[], rows: string[][], right: boolean[] = []): string {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (right[i] ? c.padStart(widths[i]!) : i === cells.length - 1 ? c : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd() + '\n';
  return [head, ...rows].map(line).join('');
}
