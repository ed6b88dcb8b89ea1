// Parse JSON text keeping enough information to point at a JSON pointer's line and column.
// JSON.parse gives the value; a small scanner maps pointers to positions only when an error
// needs one, so the happy path costs one JSON.parse.
import { EngineError } from '../errors.js';

export interface Position {
  line: number;
  column: number;
}

export class JsonSyntaxError extends EngineError {
  constructor(
    message: string,
    readonly position: Position | undefined,
  ) {
    super(message, 'JSON_SYNTAX');
  }
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

export function parseJson(text: string): unknown {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  try {
    return JSON.parse(body);
  } catch (err) {
    const message = (err as Error).message;
    const lc = /line (\d+) column (\d+)/.exec(message);
    const pos = /position (\d+)/.exec(message);
    let position: Position | undefined;
    if (lc) position = { line: Number(lc[1]), column: Number(lc[2]) };
    else if (pos) position = positionAt(body, Number(pos[1]));
    else {
      const offset = syntaxErrorOffset(body);
      if (offset !== undefined) position = positionAt(body, offset);
    }
    // One line: drop V8's position and its quoted excerpt of the source (which may span lines).
    const clean = message
      .replace(/^JSON\.parse: /, '')
      .replace(/,\s*"[\s\S]*" is not valid JSON$/, '')
      .replace(/\s*(?:in|after) JSON at position \d+[\s\S]*$/, '')
      .replace(/\s*\(line \d+ column \d+\)/, '')
      .replace(/\s+/g, ' ');
    throw new JsonSyntaxError(`invalid JSON: ${clean}`, position);
  }
}

/**
 * Offset of the first syntax error in `text`, for JSON.parse messages that carry no position.
 * Undefined when the text is valid or too deeply nested to scan.
 */
export function syntaxErrorOffset(text: string): number | undefined {
  let i = 0;
  const fail = (): never => {
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

/** Escape one segment of a JSON pointer (RFC 6901). */
export function pointerSegment(key: string | number): string {
  return String(key).replace(/~/g, '~0').replace(/\//g, '~1');
}

export function pointerOf(path: ReadonlyArray<string | number>): string {
  return path.length === 0 ? '' : '/' + path.map(pointerSegment).join('/');
}

/**
 * Find where the value at `pointer` starts in well-formed JSON text. Returns undefined if the
 * pointer does not exist (e.g. a missing property); callers then point at the parent.
 */
export function locatePointer(text: string, pointer: string): Position | undefined {
  const segments =
    pointer === ''
      ? []
      : pointer
          .slice(1)
          .split('/')
          .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  let i = 0;
  const ws = () => {
    while (i < text.length && /\s/.test(text[i]!)) i++;
  };
  const skipString = () => {
    i++;
    while (i < text.length && text[i] !== '"') {
      if (text[i] === '\\') i++;
      i++;
    }
    i++;
  };
  const readString = (): string => {
    const start = i;
    skipString();
    return JSON.parse(text.slice(start, i)) as string;
  };
  const skipValue = (): void => {
    ws();
    const c = text[i];
    if (c === '"') return skipString();
    if (c === '{' || c === '[') {
      const close = c === '{' ? '}' : ']';
      i++;
      ws();
      if (text[i] === close) {
        i++;
        return;
      }
      for (;;) {
        ws();
        if (c === '{') {
          skipString();
          ws();
          i++;
        }
        skipValue();
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        i++;
        return;
      }
    }
    while (i < text.length && !/[\s,\]}]/.test(text[i]!)) i++;
  };
  if (text.charCodeAt(0) === 0xfeff) i = 1;
  for (const seg of segments) {
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      let found = false;
      for (;;) {
        ws();
        if (text[i] === '}') break;
        const key = readString();
        ws();
        i++;
        ws();
        if (key === seg) {
          found = true;
          break;
        }
        skipValue();
        ws();
        if (text[i] === ',') i++;
        else break;
      }
      if (!found) return undefined;
    } else if (c === '[') {
      i++;
      const idx = Number(seg);
      if (!Number.isInteger(idx)) return undefined;
      for (let k = 0; k < idx; k++) {
        ws();
        if (text[i] === ']') return undefined;
        skipValue();
        ws();
        if (text[i] === ',') i++;
        else return undefined;
      }
      ws();
      if (text[i] === ']') return undefined;
    } else {
      return undefined;
    }
  }
  ws();
  return positionAt(text, i);
}
