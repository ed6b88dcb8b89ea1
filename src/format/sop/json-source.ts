// Parse JSON text keeping enough information to point at a JSON pointer's line and column.
// JSON.parse gives the value; a small scanner maps pointers to positions only when an error
// needs one, so the happy path costs one JSON.parse.
import { EngineError } from '../../shared/errors.js';
import { jsonProblem, positionAt, type Position } from '../../shared/util/json-syntax.js';

export { positionAt, syntaxErrorOffset, type Position } from '../../shared/util/json-syntax.js';

export class JsonSyntaxError extends EngineError {
  constructor(
    message: string,
    readonly position: Position | undefined,
  ) {
    super(message, 'JSON_SYNTAX');
  }
}

export function parseJson(text: string): unknown {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  try {
    return JSON.parse(body);
  } catch (err) {
    // One line, with none of the file's text: what was wrong, and its line and column.
    const { what, position } = jsonProblem(text, err);
    throw new JsonSyntaxError(`invalid JSON: ${what}`, position);
  }
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
