// A setup file of every test file (vitest.config.ts): fails the file when its event loop was
// blocked for longer than 45 s, naming the test during which it was. vitest's worker talks to its runner over an RPC whose calls time out after 60 s; a test
// that blocks the loop that long (a spawnSync of a whole CLI run, a long synchronous loop) makes
// the run end with an unhandled `Timeout calling "onTaskUpdate"` though every test passed, and on
// a loaded machine a block of a few seconds grows past that. So a test awaits its child processes
// (spawnCliAsync, test/helpers/cli.ts; test/helpers/exec.ts) and yields in a long loop.
// SOP_TEST_BLOCK_LOG=FILE appends each file's longest block to FILE (to measure them).
import { appendFileSync } from 'node:fs';
import { relative } from 'node:path';
import { afterAll, afterEach, beforeEach, expect, type RunnerTestCase } from 'vitest';

// Not scaled by SOP_TEST_TIME_SCALE: vitest's 60 s is not either. The guard fails first, naming
// the test; a block far under it on a quiet machine (SOP_TEST_BLOCK_LOG) grows 5 to 10 times at a
// load of 16, so keep each under a few seconds.
const LIMIT_MS = 45_000;
const TICK_MS = 100;
const file = relative(process.cwd(), expect.getState().testPath ?? 'unknown');

function fullName(task: RunnerTestCase): string {
  const names: string[] = [task.name];
  for (let s = task.suite; s && s.name; s = s.suite) names.unshift(s.name);
  return names.join(' > ');
}

// The test running now (since when), and the time each test ran since the last tick: a block that
// ended at a tick spanned those tests (vitest goes from one synchronous test to the next without
// turning the loop). It is put down to the one that ran longest in it, if that was most of it;
// else to the time outside any test (a hook, the file's top level).
let current: { name: string; since: number } | undefined;
let window = new Map<string, number>();
let longest = { ms: 0, during: undefined as { name: string; ms: number } | undefined };
let last = performance.now();

function account(until: number): void {
  if (!current) return;
  window.set(current.name, (window.get(current.name) ?? 0) + until - Math.max(current.since, last));
}

function tick(): void {
  const now = performance.now();
  account(now);
  const gap = now - last - TICK_MS; // the time the loop was held beyond the interval
  if (gap > longest.ms) {
    const [name, ms] = [...window].reduce<[string, number] | undefined>((a, b) => (a && a[1] >= b[1] ? a : b), undefined) ?? ['', 0];
    longest = { ms: gap, during: ms >= gap / 2 ? { name, ms: Math.min(ms, gap) } : undefined };
  }
  last = now;
  window = new Map();
}

const timer = setInterval(tick, TICK_MS).unref();

beforeEach(({ task }) => {
  current = { name: fullName(task), since: performance.now() };
});
afterEach(() => {
  account(performance.now());
  current = undefined;
});

// Registered before the file's own hooks, so it runs after its afterAll hooks (a stack).
afterAll(() => {
  tick();
  clearInterval(timer);
  const seconds = (longest.ms / 1000).toFixed(1);
  const where = longest.during
    ? `during '${longest.during.name}' (${(longest.during.ms / 1000).toFixed(1)} s of it)`
    : 'outside any test (in a hook or at the top level)';
  const log = process.env.SOP_TEST_BLOCK_LOG;
  if (log) appendFileSync(log, `${file}\t${seconds} s\t${where}\n`);
  if (longest.ms > LIMIT_MS)
    throw new Error(
      `${file} blocked its event loop for ${seconds} s ${where} (at most ${LIMIT_MS / 1000} s): vitest's calls to its runner time out ` +
        `after 60 s of a blocked event loop and fail the whole run; await child processes (spawnCliAsync) and yield in long loops`,
    );
});
