// The JavaScript session of the code executor (code-session.ts), run as its own node process so
// the code cannot touch the engine: cells run one after the other in one node:vm context, so a
// variable set by one is there for the next. The same protocol as python_session.py: a request
// {"code"} per line on stdin; after the cell, the marker on stderr, then the marker and the reply
// {"error", "exit", "files"} on stdout. What the cell prints before the marker is its output.
import { createInterface } from 'node:readline';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { createContext, Script } from 'node:vm';
import { filesSnapshot, writtenFiles } from './files-snapshot.js';
import { hoistTopLevel } from './js-top-level.js';
import { hasTopLevelAwait, runAwaitCell } from './js-await.js';

const MARK = process.env.SOP_SESSION_MARK ?? '';
delete process.env.SOP_SESSION_MARK;
const ROOT = process.cwd();

class CellExit {
  constructor(readonly code: number) {}
}

// process.exit in a cell ends the cell, not the session
const cellProcess = new Proxy(process, {
  get(target, key) {
    if (key === 'exit')
      return (code?: number) => {
        // eslint-disable-next-line @typescript-eslint/only-throw-error -- a signal to the cell runner, not an error
        throw new CellExit(typeof code === 'number' ? code : 0);
      };
    const value = Reflect.get(target, key, target) as unknown;
    return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
  },
});

const requireHere = createRequire(join(ROOT, '[cell].js'));
const context = createContext({
  console,
  process: cellProcess,
  require: requireHere,
  module: { exports: {} },
  __dirname: ROOT,
  __filename: join(ROOT, '[cell].js'),
  Buffer,
  URL,
  URLSearchParams,
  TextEncoder,
  TextDecoder,
  AbortController,
  structuredClone,
  setTimeout,
  clearTimeout,
  setInterval,
  clearInterval,
  setImmediate,
  clearImmediate,
  queueMicrotask,
  fetch: globalThis.fetch,
});

function errorText(err: unknown): string {
  if (err && typeof err === 'object' && 'stack' in err && typeof err.stack === 'string') {
    const lines = (err as { stack: string }).stack.split('\n');
    // the driver's own frames and node's vm internals are not the cell's
    return lines.filter((l) => !/js-session\.js|js-await\.js|node:vm|node:internal|node:events|node:repl|node:domain/.test(l)).join('\n');
  }
  return `Uncaught ${inspect(err)}`;
}

const reportLate = (err: unknown) => process.stderr.write(`${errorText(err)}\n`);

let cell = 0;
async function runCell(code: string): Promise<{ error: string | null; exit: number | null }> {
  cell++;
  try {
    // top-level const, let and class become var: a later cell may declare the same name again
    const hoisted = hoistTopLevel(code);
    // a top-level await: Node's REPL runs the cell inside an async function (js-await.ts)
    const filename = `cell ${cell}`;
    let value = hasTopLevelAwait(hoisted, filename)
      ? await runAwaitCell(hoisted, context, filename, reportLate)
      : (new Script(hoisted, { filename }).runInContext(context) as unknown);
    if (value && typeof (value as { then?: unknown }).then === 'function') value = await Promise.resolve(value);
    if (value !== undefined) console.log(inspect(value));
    return { error: null, exit: null };
  } catch (err) {
    if (err instanceof CellExit) return { error: null, exit: err.code };
    return { error: errorText(err), exit: null };
  }
}

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
const queue: string[] = [];
let busy = false;
async function drain(): Promise<void> {
  if (busy) return;
  busy = true;
  while (queue.length > 0) {
    const line = queue.shift()!;
    if (line.trim() === '') continue;
    const { code } = JSON.parse(line) as { code?: string };
    const before = filesSnapshot(ROOT);
    const r = await runCell(code ?? '');
    const reply = { ...r, files: writtenFiles(before, filesSnapshot(ROOT)) };
    // pipes are written synchronously on Linux, so the output comes before the marker
    process.stderr.write(MARK);
    process.stdout.write(MARK + JSON.stringify(reply) + '\n');
  }
  busy = false;
}
lines.on('line', (line) => {
  queue.push(line);
  void drain();
});
// a cell's unhandled rejection or error in a callback is reported, not fatal to the session
process.on('uncaughtException', (err) => process.stderr.write(`${errorText(err)}\n`));
process.on('unhandledRejection', (err) => process.stderr.write(`${errorText(err)}\n`));
