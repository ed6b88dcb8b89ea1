// The cells text takes on a terminal (src/apps/cli/terminal-cells.ts, string-width): the terminal
// display wraps and cuts lines by them, so a wide or joined character counted wrong shifts a column.
import { describe, expect, it } from 'vitest';
import { cellWidth, fit } from '../src/apps/cli/terminal-cells.js';

describe('cells on a terminal', () => {
  it('counts wide characters and emoji as two, combining marks and escape codes as none', () => {
    expect(cellWidth('abc')).toBe(3);
    expect(cellWidth('漢字')).toBe(4);
    expect(cellWidth('한국')).toBe(4);
    expect(cellWidth('ｆｕｌｌ')).toBe(8); // fullwidth Latin
    expect(cellWidth('🙂')).toBe(2);
    expect(cellWidth('👩‍👩‍👧')).toBe(2); // one family emoji joined from three
    expect(cellWidth('e\u0301')).toBe(1); // e and a combining acute accent
    expect(cellWidth('\u001b[31mred\u001b[0m')).toBe(3);
  });

  it('cuts at whole characters that fit', () => {
    expect(fit('漢字かな', 5)).toBe('漢字');
    expect(fit('ab🙂cd', 3)).toBe('ab');
    expect(fit('ab🙂cd', 4)).toBe('ab🙂');
    expect(fit('👩‍👩‍👧x', 2)).toBe('👩‍👩‍👧');
    expect(fit('e\u0301e\u0301e\u0301', 2)).toBe('e\u0301e\u0301');
    expect(fit('short', 80)).toBe('short');
  });
});
