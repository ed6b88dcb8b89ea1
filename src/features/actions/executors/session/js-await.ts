// Top-level `await` in a JavaScript session cell, as in Node's REPL. A cell that compiles as a
// script runs as before (js-session.ts); one that only compiles inside an async function (it
// awaits at the top level) is handed to the eval of a `node:repl` REPL server on streams nobody
// reads (one for the session, made with its first such cell: a REPL server that has evaluated
// code is never freed). That eval is Node's own: it wraps the cell in an async function, hoists
// its top-level declarations (var, let, const, class, function, destructuring) out of it so they
// stay in the session's context, and returns the value of the last expression.
// The REPL reports a cell's exception through its domain rather than its callback. The same
// domain gets what a callback the cell left behind throws later (a timer, an event): the domain
// marks those `domainThrown`, and they are printed to stderr like any error in a callback
// rather than taken for the exception of the cell running then.
import type { ReplOptions, REPLServer } from 'node:repl';
import { PassThrough } from 'node:stream';
import { Script, type Context } from 'node:vm';

/**
 * True when the code is not a valid script but is a valid async function body: it awaits at the
 * top level. When it is neither, and the script's only complaint is the await, the async body's
 * syntax error is thrown instead, as it names the real mistake (`await f(` lacks a parenthesis).
 */
export function hasTopLevelAwait(code: string, filename: string): boolean {
  if (!code.includes('await')) return false;
  let asScript: unknown;
  try {
    new Script(code);
    return false;
  } catch (err) {
    asScript = err;
  }
  const opened = `(async () => {\n${code}`;
  try {
    new Script(`${opened}\n})`);
    return true;
  } catch {
    // neither
  }
  if (asScript instanceof SyntaxError && asScript.message.includes('await is only valid')) {
    // the body without the wrapper's closing brace, so an error at the end reads "Unexpected
    // end of input" and points into the cell rather than at code the cell does not have
    new Script(opened, { filename, lineOffset: -1 });
  }
  return false;
}

type Settle = (outcome: { error: unknown } | { value: unknown }) => void;
let pending: Settle | null = null;
let repl: REPLServer | null = null;

// node:repl and node:domain are loaded with the first such cell: loading the domain module
// changes how node tracks asynchronous work, and a session without top-level await is left as it was
async function server(lateError: (err: unknown) => void): Promise<REPLServer> {
  if (repl) return repl;
  const [{ start }, { create: createDomain }] = await Promise.all([import('node:repl'), import('node:domain')]);
  if (repl) return repl;
  const domain = createDomain();
  // registered before the REPL's own listener, which rewrites the error's stack for its display
  domain.on('error', (err: unknown) => {
    const thrownByCallback = !!err && typeof err === 'object' && 'domainThrown' in err;
    // read the stack now, or the REPL's listener cuts the cell's frames from it (the error
    // comes from the cell's realm, so `instanceof Error` would not hold)
    if (err && typeof err === 'object') void (err as { stack?: unknown }).stack;
    if (pending && !thrownByCallback) pending({ error: err });
    else lateError(err);
  });
  const output = new PassThrough();
  output.resume(); // what the REPL writes (its prompt, its view of an error) is dropped
  // `domain` is an option of REPLServer that its typings leave out
  const options: ReplOptions & { domain: typeof domain } = {
    input: new PassThrough(),
    output,
    prompt: '',
    terminal: false,
    domain,
  };
  repl = start(options);
  return repl;
}

/**
 * Runs a cell with a top-level await in the context; resolves to the value of its last
 * expression statement (undefined if none), rejects with what it throws or rejects with.
 * `lateError` gets an error thrown by a callback a cell left behind. One cell at a time.
 */
export async function runAwaitCell(code: string, context: Context, filename: string, lateError: (err: unknown) => void): Promise<unknown> {
  const evaluator = await server(lateError);
  const done = new Promise<unknown>((resolve, reject) => {
    pending = (outcome) => {
      pending = null;
      if ('error' in outcome) reject(outcome.error);
      else resolve(outcome.value);
    };
  });
  evaluator.eval(code, context, filename, (err, value) => {
    // a syntax error comes back wrapped as "Recoverable" when the input looks unfinished
    if (err) pending?.({ error: 'err' in err ? (err as { err: unknown }).err : err });
    else pending?.({ value });
  });
  return done;
}
