// A setup file of the unit tier, whose files share their worker one after another (isolate: false
// in vitest.config.ts: the engine's modules are loaded once per worker, not once per file). What a
// file changes of the process's state is put back when it ends: its environment variables, its
// spies and stubs, and the working directory.
import { afterAll, vi } from 'vitest';

const env = { ...process.env };
const cwd = process.cwd();

afterAll(() => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
  vi.unstubAllGlobals();
  vi.useRealTimers();
  for (const k of Object.keys(process.env)) if (!(k in env)) delete process.env[k];
  Object.assign(process.env, env);
  if (process.cwd() !== cwd) process.chdir(cwd);
});
