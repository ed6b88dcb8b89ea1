// The SOPs shipped in the package's sops/ folder: a SOP named on the command line that is not a
// file here is looked for there (`sop run jarvis.sop.json`, `sop run jarvis`, `sop run
// sops/jarvis.sop.json` from any folder), and `sop list` shows them with their descriptions.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { packageRoot } from '../../shared/util/package-root.js';
import { EngineError } from '../../shared/errors.js';

const SUFFIX = '.sop.json';

export function builtinSopDir(): string {
  return join(packageRoot(), 'sops');
}

/** Names of the built-in SOP files (e.g. jarvis.sop.json), sorted. */
export function builtinSopFiles(): string[] {
  try {
    return readdirSync(builtinSopDir())
      .filter((f) => f.endsWith(SUFFIX))
      .sort();
  } catch {
    return [];
  }
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

export class SopNotFoundError extends EngineError {
  constructor(arg: string) {
    const names = builtinSopFiles().map((f) => f.slice(0, -SUFFIX.length));
    super(
      `${arg}: no such file here, and no built-in SOP of that name` +
        (names.length ? ` (built-in: ${names.join(', ')}; sop list describes them)` : ''),
      'SOP_NOT_FOUND',
    );
    this.name = 'SopNotFoundError';
  }
}

/**
 * The SOP file a command-line argument names: the path itself when it exists (a folder or
 * anything else there is the loader's to report), else the built-in of that name, with or
 * without `.sop.json` and a leading `sops/`.
 */
export function resolveSopArg(arg: string): string {
  if (existsSync(arg)) return arg;
  const name = /^(?:\.\/)?sops\/[^/]+$/.test(arg) ? basename(arg) : arg;
  if (name.includes('/') || name.includes('\\') || name === '' || name.startsWith('.')) throw new SopNotFoundError(arg);
  for (const candidate of [name, `${name}${SUFFIX}`]) {
    const file = join(builtinSopDir(), candidate);
    if (isFile(file)) return file;
  }
  throw new SopNotFoundError(arg);
}

/** `sop list`: the built-in SOPs and their descriptions. */
export function listCommand(out: NodeJS.WritableStream = process.stdout): number {
  const files = builtinSopFiles();
  if (files.length === 0) {
    out.write(`no built-in SOPs in ${builtinSopDir()}\n`);
    return 1;
  }
  let text = `Built-in SOPs (run one with: sop run NAME), in ${builtinSopDir()}:\n\n`;
  for (const f of files) {
    let description: string;
    try {
      const doc = JSON.parse(readFileSync(join(builtinSopDir(), f), 'utf8')) as { description?: unknown };
      description = typeof doc.description === 'string' ? doc.description : '';
    } catch {
      description = '(cannot be read)';
    }
    text += `${f.slice(0, -SUFFIX.length)}\n${wrap(description || '(no description)', 96, '    ')}\n\n`;
  }
  out.write(text); // one write: a reader that stops early (| head) does not break a second one
  return 0;
}

function wrap(text: string, width: number, indent: string): string {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(indent + line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(indent + line);
  return lines.join('\n');
}
