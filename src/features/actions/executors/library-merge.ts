// Saving to the code library replaces a function already there under the same name instead of
// adding a second copy: saving the same function twice (a second run with --memory-dir, a retry)
// leaves it in the library, and in the code_library memory file, exactly once.
import { spawnSync } from 'node:child_process';

type Lang = 'python' | 'javascript';

// Not a prompt: a small Python program giving the line ranges of the top-level definitions of
// the names given, in the module on stdin (decorators included).
const PY_RANGES = [
  'import ast, json, sys',
  'req = json.loads(sys.stdin.read())',
  'try:',
  '    tree = ast.parse(req["source"])',
  'except SyntaxError:',
  '    print("null"); sys.exit(0)',
  'out = []',
  'for node in tree.body:',
  '    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name in req["names"]:',
  '        start = min([node.lineno] + [d.lineno for d in node.decorator_list])',
  '        out.append([start, node.end_lineno])',
  'print(json.dumps(out))',
].join('\n');

/** Remove line ranges (1-based, inclusive) from text. */
function dropLines(text: string, ranges: Array<[number, number]>): string {
  const lines = text.split('\n');
  const drop = new Set<number>();
  for (const [a, b] of ranges) for (let i = a; i <= b; i++) drop.add(i - 1);
  return lines.filter((_, i) => !drop.has(i)).join('\n');
}

function withoutPython(module: string, names: string[]): string {
  const r = spawnSync('python3', ['-c', PY_RANGES], {
    input: JSON.stringify({ source: module, names }),
    encoding: 'utf8',
    timeout: 20_000,
  });
  let ranges: Array<[number, number]> | null;
  try {
    ranges = JSON.parse(r.stdout) as Array<[number, number]> | null;
  } catch {
    ranges = null;
  }
  // a module that does not parse is left as it is (the new block is appended)
  return ranges ? dropLines(module, ranges) : module;
}

function withoutJavascript(module: string, names: string[]): string {
  const lines = module.split('\n');
  const out: string[] = [];
  const starts = new RegExp(`^(?:export\\s+)?(?:async\\s+)?function\\s*\\*?\\s*(${names.map(escape).join('|')})\\s*\\(`);
  const exportLine = new RegExp(`^module\\.exports\\.(${names.map(escape).join('|')})\\s*=\\s*\\1;\\s*$`);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (exportLine.test(line)) continue;
    if (starts.test(line)) {
      // a leading doc comment goes with it
      while (out.length && /^\s*(\/\*\*|\*|\*\/)/.test(out[out.length - 1]!)) out.pop();
      // to the closing brace at the start of a line
      while (i < lines.length && !/^}/.test(lines[i]!)) i++;
      continue;
    }
    out.push(line);
  }
  return out.join('\n');
}

function escape(name: string): string {
  return name.replace(/[$]/g, '\\$');
}

/** The module with `block` (defining `names`) saved: earlier definitions of those names removed, the block at the end. */
export function mergeIntoModule(module: string, block: string, names: string[], lang: Lang): string {
  const rest = module.trim() === '' ? '' : lang === 'python' ? withoutPython(module, names) : withoutJavascript(module, names);
  const kept = rest.replace(/\n{3,}/g, '\n\n\n').trim();
  return kept === '' ? block : `${kept}\n\n\n${block}`;
}

/** The code_library memory file with `entries` for `names`: earlier entries of those names replaced. */
export function mergeLibraryEntries(text: string, entry: string, names: string[]): string {
  const blocks: string[] = [];
  for (const line of text.split('\n')) {
    if (/^(def |async def |class |function )/.test(line) || blocks.length === 0) blocks.push(line);
    else blocks[blocks.length - 1] += `\n${line}`;
  }
  const nameOf = (b: string) => /^(?:async def|def|class|function)\s+([A-Za-z_$][\w$]*)/.exec(b)?.[1];
  const kept = blocks
    .filter((b) => {
      const n = nameOf(b);
      return n === undefined || !names.includes(n);
    })
    .join('\n')
    .trim();
  return kept === '' ? entry : `${kept}\n\n${entry}`;
}
