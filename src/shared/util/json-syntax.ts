// JSON that JSON.parse refused, described without any of its bytes: V8's message quotes the
// text ("Unexpected token 'r', \"root:x:0:0\"... is not valid JSON"), and a user file named by
// mistake (or on purpose) must not reach the terminal, a log or an agent that way. The message
// keeps what was wrong in general words and where: the line and the column.
import { existsSync, readFileSync } from 'node:fs';

export interface Position {
  line: number;
  column: number;
}

/** Line and column (1-based) of a character offset. */
export function positionAt(text: string, offset: number): Position {
  let line = 1;
  let lastNewline = -1;
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      lastNewline = i;
    }
  }
  return { line, column: offset - lastNewline };
}

/**
 * Offset of the first syntax error in `text`, for JSON.parse messages that carry no position.
 * Undefined when the text is valid or too deeply nested to scan.
 */
export function syntaxErrorOffset(text: string): number | undefined {
  let i = 0;
  const fail = (): never => {
    // eslint-disable-next-line @typescript-eslint/only-throw-error -- a signal to the scan's caller, not an error
    throw new JsonScanStop(i);
  };
  const ws = () => {
    while (i < text.length && (text[i] === ' ' || text[i] === '\t' || text[i] === '\n' || text[i] === '\r')) i++;
  };
  const literal = (word: string) => {
    for (const ch of word) {
      if (text[i] !== ch) fail();
      i++;
    }
  };
  const string = () => {
    i++;
    for (;;) {
      if (i >= text.length) fail();
      const c = text.charCodeAt(i);
      if (c === 0x22) {
        i++;
        return;
      }
      if (c < 0x20) fail();
      if (c === 0x5c) {
        i++;
        const e = text[i];
        if (e === 'u') {
          for (let k = 0; k < 4; k++) {
            i++;
            if (!/[0-9a-fA-F]/.test(text[i] ?? '')) fail();
          }
        } else if (e === undefined || !'"\\/bfnrt'.includes(e)) fail();
      }
      i++;
    }
  };
  const number = () => {
    const re = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
    re.lastIndex = i;
    const m = re.exec(text);
    if (!m || m[0] === '-' || m[0] === '') fail();
    i = re.lastIndex;
  };
  const value = (): void => {
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      ws();
      if (text[i] === '}') {
        i++;
        return;
      }
      for (;;) {
        ws();
        if (text[i] !== '"') fail();
        string();
        ws();
        if (text[i] !== ':') fail();
        i++;
        value();
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === '}') {
          i++;
          return;
        }
        fail();
      }
    } else if (c === '[') {
      i++;
      ws();
      if (text[i] === ']') {
        i++;
        return;
      }
      for (;;) {
        value();
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === ']') {
          i++;
          return;
        }
        fail();
      }
    } else if (c === '"') string();
    else if (c === 't') literal('true');
    else if (c === 'f') literal('false');
    else if (c === 'n') literal('null');
    else if (c === '-' || (c !== undefined && c >= '0' && c <= '9')) number();
    else fail();
  };
  try {
    value();
    ws();
    if (i < text.length) fail();
    return undefined;
  } catch (err) {
    if (err instanceof JsonScanStop) return Math.min(err.offset, text.length);
    return undefined; // too deep for the stack
  }
}

class JsonScanStop {
  constructor(readonly offset: number) {}
}

/** What was wrong, in V8's words minus the file's bytes, and where. */
export interface JsonProblem {
  /** "Unexpected character", "Unterminated string", ... (never the file's text). */
  what: string;
  position?: Position;
}

/** The problem of `text`, which JSON.parse refused with `err`. */
export function jsonProblem(text: string, err: unknown): JsonProblem {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const message = err instanceof Error ? err.message : String(err);
  const lc = /line (\d+) column (\d+)/.exec(message);
  const pos = /position (\d+)/.exec(message);
  let position: Position | undefined;
  if (lc) position = { line: Number(lc[1]), column: Number(lc[2]) };
  else if (pos) position = positionAt(body, Number(pos[1]));
  else {
    const offset = syntaxErrorOffset(body);
    if (offset !== undefined) position = positionAt(body, offset);
  }
  // V8 quotes the token it stopped at and an excerpt of the text: neither is kept.
  const what = /^(JSON\.parse: )?Unexpected token/.test(message)
    ? 'Unexpected character'
    : message
        .replace(/^JSON\.parse: /, '')
        .replace(/,\s*"[\s\S]*" is not valid JSON$/, '')
        .replace(/\s*(?:in|after) JSON at position \d+[\s\S]*$/, '')
        .replace(/\s*\(line \d+ column \d+\)/, '')
        .replace(/"[\s\S]*"/g, '')
        .replace(/\s+/g, ' ')
        .trim() || 'Not valid JSON';
  return { what, ...(position ? { position } : {}) };
}

/** "line 2, column 11: Unexpected character": where and what, never the text itself. */
export function describeJsonProblem(text: string, err: unknown): string {
  const p = jsonProblem(text, err);
  return p.position ? `line ${p.position.line}, column ${p.position.column}: ${p.what}` : p.what;
}

/** The document of a JSON file, or undefined when there is no file; `bad` makes the error for a file that is not JSON. */
export function readJsonFile(file: string, bad: (message: string) => Error): unknown {
  if (!existsSync(file)) return undefined;
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
    return JSON.parse(text) as unknown;
  } catch (err) {
    if (!(err instanceof SyntaxError)) throw err;
    throw bad(`${file}: not valid JSON (${describeJsonProblem(text, err)})`);
  }
}
