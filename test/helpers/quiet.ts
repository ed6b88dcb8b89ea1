// What an in-process command writes to stderr, kept off the test's output while `f` runs.
import { vi } from 'vitest';

/** Runs `f` with process.stderr.write silenced; puts it back after, whatever `f` does. */
export async function quietStderr<T>(f: () => Promise<T>): Promise<T> {
  const spy = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
  try {
    return await f();
  } finally {
    spy.mockRestore();
  }
}
