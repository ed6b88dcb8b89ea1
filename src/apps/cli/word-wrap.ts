// Text written to a terminal, wrapped at word boundaries: a word that would not fit on the rest
// of the row starts the next one (the spaces before it are dropped); a word longer than a whole
// row (a path, a URL) starts a row of its own and is left to the terminal to wrap, so that copying
// it gives it whole. Text arrives in pieces (a streamed reply), so the word being written is held
// back until a space or a line feed ends it, or until `flush()`. SGR escape sequences (colours)
// take no cells; the width is read at each piece, so a resized terminal wraps at its new width.
import { cellWidth } from './terminal-cells.js';

// eslint-disable-next-line no-control-regex -- the display's own colour sequences take no cells
const PIECE = /\x1b\[[0-9;]*m|\r?\n|[ \t]|[^\s\x1b]+|[\s\S]/g;

export class WordWrap {
  /** Cells used on the current row. */
  private col = 0;
  /** Whitespace seen since the last word, not yet written (dropped when the row ends). */
  private spaces = '';
  /** The word being written, escapes included. */
  private word = '';
  private wordCells = 0;
  /** The word being written is longer than a row and is written as it comes. */
  private inLong = false;
  /** The current row was started by wrapping (not by a line feed of the text). */
  private wrapped = false;

  constructor(private readonly width: () => number) {}

  /** What to write for `text`: everything up to the word still being written. */
  push(text: string): string {
    let out = '';
    const width = Math.max(this.width(), 10);
    for (const [piece] of text.matchAll(PIECE)) {
      if (piece.startsWith('\x1b')) {
        if (this.inLong) out += piece;
        else this.word += piece;
      } else if (piece.endsWith('\n')) {
        out += this.endWord(width) + piece;
        this.spaces = '';
        this.col = 0;
        this.inLong = false;
        this.wrapped = false;
      } else if (piece === ' ' || piece === '\t') {
        out += this.endWord(width);
        this.spaces += piece;
        this.inLong = false;
      } else if (this.inLong) {
        out += piece;
        this.col = ((this.col + cellWidth(piece) - 1) % width) + 1;
      } else {
        this.word += piece;
        this.wordCells += cellWidth(piece);
        if (this.wordCells > width) out += this.long(width);
      }
    }
    return out;
  }

  /** The word held back, written as it is (before a line of another stream, or at the end). */
  flush(): string {
    const out = this.endWord(Math.max(this.width(), 10));
    return out;
  }

  /** Whether text was written on the current row (or is held back). */
  get midLine(): boolean {
    return this.col > 0 || this.word !== '';
  }

  private endWord(width: number): string {
    if (this.word === '') return '';
    let out: string;
    // indentation at the start of a line is kept; the spaces where a row was wrapped are not
    const gap = this.col === 0 && this.wrapped ? '' : expandTabs(this.spaces, this.col);
    if (this.col > 0 && this.col + gap.length + this.wordCells > width) {
      out = `\n${this.word}`;
      this.col = this.wordCells;
      this.wrapped = true;
    } else {
      out = gap + this.word;
      this.col += gap.length + this.wordCells;
    }
    this.spaces = '';
    this.word = '';
    this.wordCells = 0;
    return out;
  }

  /** A word longer than a row: on a row of its own, the rest of it written as it comes. */
  private long(width: number): string {
    const indent = this.col > 0 ? '' : expandTabs(this.spaces, 0);
    const out = (this.col > 0 ? '\n' : indent) + this.word;
    this.col = ((indent.length + this.wordCells - 1) % width) + 1;
    this.spaces = '';
    this.word = '';
    this.wordCells = 0;
    this.inLong = true;
    this.wrapped = true;
    return out;
  }
}

/** Spaces and tabs as spaces, tabs reaching the next multiple of 8 from column `col`. */
function expandTabs(spaces: string, col: number): string {
  let out = '';
  for (const c of spaces) out += c === '\t' ? ' '.repeat(8 - ((col + out.length) % 8)) : c;
  return out;
}

/** `text` wrapped for `stream` when it is a terminal (the closing lines of a run), as it is otherwise. */
export function wrapFor(stream: { isTTY?: boolean; columns?: number }, text: string): string {
  if (!stream.isTTY) return text;
  const wrap = new WordWrap(() => stream.columns || 80);
  return wrap.push(text) + wrap.flush();
}
