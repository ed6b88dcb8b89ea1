// Cells text takes on a terminal (string-width: East Asian wide characters and emoji take two,
// combining marks and escape codes none).
import stringWidth from 'string-width';

/** Cells a string takes on a terminal: East Asian wide characters and emoji take two. */
export function cellWidth(s: string): number {
  return stringWidth(s);
}

const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/** The longest start of `s` that fits in `cells` cells (whole characters: an emoji or an accented letter is not cut). */
export function fit(s: string, cells: number): string {
  let w = 0;
  let out = '';
  for (const { segment } of graphemes.segment(s)) {
    w += stringWidth(segment);
    if (w > cells) break;
    out += segment;
  }
  return out;
}
