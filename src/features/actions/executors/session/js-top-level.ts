// Top-level `const`, `let` and `class` declarations of a JavaScript cell become `var`s, so a later
// cell may declare the same name again (as in the browser console or a notebook) instead of
// failing with "Identifier 'x' has already been declared"; the values still persist across cells.
// A small scanner: strings, template literals, comments and regular expressions are skipped, and
// only declarations outside every bracket, at the start of a statement, are changed.

const IDENT = /[A-Za-z0-9_$]/;
/** After these, a `/` starts a regular expression rather than a division. */
const REGEX_AFTER = new Set(['', '(', ',', '=', ':', '[', '!', '&', '|', '?', '{', '}', ';', '+', '-', '*', '%', '<', '>', '~', '^']);

export function hoistTopLevel(code: string): string {
  let out = '';
  let depth = 0;
  let last = ''; // the last significant character
  let atStatement = true;
  let i = 0;
  const n = code.length;
  const copyUntil = (end: number) => {
    out += code.slice(i, end);
    i = end;
  };
  while (i < n) {
    const c = code[i]!;
    const next = code[i + 1];
    if (c === '/' && next === '/') {
      const end = code.indexOf('\n', i);
      copyUntil(end < 0 ? n : end);
      continue;
    }
    if (c === '/' && next === '*') {
      const end = code.indexOf('*/', i + 2);
      copyUntil(end < 0 ? n : end + 2);
      continue;
    }
    if (c === '"' || c === "'") {
      let j = i + 1;
      while (j < n && code[j] !== c && code[j] !== '\n') j += code[j] === '\\' ? 2 : 1;
      copyUntil(Math.min(n, j + 1));
      last = c;
      atStatement = false;
      continue;
    }
    if (c === '`') {
      // a template literal; ${...} inside may nest further templates
      let j = i + 1;
      let inner = 0;
      while (j < n) {
        const d = code[j]!;
        if (d === '\\') j += 2;
        else if (inner === 0 && d === '`') break;
        else if (d === '$' && code[j + 1] === '{') {
          inner++;
          j += 2;
        } else if (inner > 0 && d === '}') {
          inner--;
          j++;
        } else j++;
      }
      copyUntil(Math.min(n, j + 1));
      last = '`';
      atStatement = false;
      continue;
    }
    if (c === '/' && REGEX_AFTER.has(last)) {
      let j = i + 1;
      let inClass = false;
      while (j < n && code[j] !== '\n') {
        const d = code[j]!;
        if (d === '\\') j++;
        else if (d === '[') inClass = true;
        else if (d === ']') inClass = false;
        else if (d === '/' && !inClass) break;
        j++;
      }
      j++;
      while (j < n && /[a-z]/i.test(code[j]!)) j++;
      copyUntil(Math.min(n, j));
      last = '/';
      atStatement = false;
      continue;
    }
    if (IDENT.test(c)) {
      let j = i;
      while (j < n && IDENT.test(code[j]!)) j++;
      const word = code.slice(i, j);
      const prevIdent = i > 0 && IDENT.test(code[i - 1]!);
      if (depth === 0 && atStatement && !prevIdent && /^[\s{[]/.test(code.slice(j, j + 1))) {
        if (word === 'const' || word === 'let') {
          out += 'var';
          i = j;
          last = 'r';
          atStatement = false;
          continue;
        }
        const cls = /^\s+([A-Za-z_$][\w$]*)/.exec(code.slice(j));
        if (word === 'class' && cls) {
          out += `var ${cls[1]} = class`;
          i = j;
          last = 's';
          atStatement = false;
          continue;
        }
      }
      copyUntil(j);
      last = word[word.length - 1]!;
      atStatement = false;
      continue;
    }
    if (c === '{' || c === '(' || c === '[') depth++;
    else if (c === '}' || c === ')' || c === ']') depth = Math.max(0, depth - 1);
    if (c === ';' || c === '\n' || ((c === '}' || c === '{') && depth === 0)) atStatement = true;
    else if (!/\s/.test(c)) atStatement = false;
    if (!/\s/.test(c)) last = c;
    out += c;
    i++;
  }
  return out;
}
