// Cells text takes on a terminal: East Asian wide characters and emoji take two.

/** Cells a string takes on a terminal: East Asian wide characters and emoji take two. */
export function cellWidth(s: string): number {
  let w = 0;
  for (const ch of s) w += wide(ch.codePointAt(0)!) ? 2 : 1;
  return w;
}

function wide(c: number): boolean {
  return (
    (c >= 0x1100 && c <= 0x115f) ||
    (c >= 0x2e80 && c <= 0xa4cf) ||
    (c >= 0xac00 && c <= 0xd7a3) ||
    (c >= 0xf900 && c <= 0xfaff) ||
    (c >= 0xfe30 && c <= 0xfe4f) ||
    (c >= 0xff00 && c <= 0xff60) ||
    (c >= 0xffe0 && c <= 0xffe6) ||
    (c >= 0x1f300 && c <= 0x1faff) ||
    (c >= 0x20000 && c <= 0x3fffd)
  );
}

/** The longest start of `s` that fits in `cells` cells. */
export function fit(s: string, cells: number): string {
  let w = 0;
  let out = '';
  for (const ch of s) {
    w += wide(ch.codePointAt(0)!) ? 2 : 1;
    if (w > cells) break;
    out += ch;
  }
  return out;
}
