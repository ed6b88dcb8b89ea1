// Shared helpers of the engine benches: the built engine (imported as 'sop'), a provider wrapper that times
// the LLM, the prompt as bytes, and throw-away run folders.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const FIXTURES = join(ROOT, 'bench', 'fixtures');
/** The engine as `npm run build` left it, through its public entry points (package.json "exports": sop, sop/extend). */
export async function loadEngine() {
  const { loadSop, MockProvider } = await import('sop');
  const { Run, RunFolder, makeRedactor, ListEnvironment } = await import('sop/extend');
  const loadSopFile = (file) => ({ sop: loadSop(file), file });
  return { loadSopFile, Run, MockProvider, RunFolder, makeRedactor, ListEnvironment };
}

export async function loadLlm() {
  const { openaiProvider, limitConcurrency } = await import('sop/extend');
  return { openaiProvider, limitConcurrency };
}

/**
 * Wraps a provider and adds up the wall time spent inside its `chat` (that time is the LLM's,
 * not the engine's). `onCall` runs inside the timed span, so what it costs is not counted
 * as engine overhead either.
 */
export class TimedProvider {
  constructor(inner, onCall) {
    this.inner = inner;
    this.onCall = onCall;
    this.id = inner.id;
    // BENCH_PAID=1: calls count as paid, so the journal writes each one's llm_call_started line first
    this.paid = process.env.BENCH_PAID === '1' ? true : inner.paid;
    this.ms = 0;
    this.calls = 0;
  }

  get position() {
    return this.inner.position;
  }
  seek(cursor) {
    return this.inner.seek?.(cursor);
  }
  close() {
    return this.inner.close?.();
  }

  async chat(request, options) {
    const started = performance.now();
    try {
      const response = await this.inner.chat(request, options);
      this.onCall?.(request, response);
      return response;
    } finally {
      this.ms += performance.now() - started;
      this.calls++;
    }
  }
}

/** The prompt as one byte string, the way a chat template lays the messages out. */
export function promptBytes(messages) {
  let s = '';
  for (const m of messages) s += `<|${m.role}|>\n${m.content}\n`;
  return Buffer.from(s, 'utf8');
}

/** Length of the common prefix of two byte strings. */
export function commonPrefix(a, b) {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}

/** A temporary folder for run folders, removed by the returned function. */
export function tempRuns(label) {
  const dir = mkdtempSync(join(tmpdir(), `sop-bench-${label}-`));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
