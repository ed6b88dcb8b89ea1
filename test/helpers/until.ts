// The one way tests wait for something: poll a condition until it holds (a readiness signal,
// a process gone, a file written), never a fixed sleep. Resolves to whether it held in time.
import { scaled } from './time.js';

export interface UntilOptions {
  /**
   * Give up after this many milliseconds, times SOP_TEST_TIME_SCALE (test/helpers/time.ts)
   * (default 5000; Infinity: only the condition or the test's timeout end it).
   */
  timeoutMs?: number;
  /** Milliseconds between polls (default 20; 0 polls on every turn of the event loop). */
  intervalMs?: number;
}

/** Polls `cond` until it returns true; false when the (scaled) `timeoutMs` passes first (`cond` is asked once more at the end). */
export async function until(cond: () => boolean | Promise<boolean>, options: UntilOptions = {}): Promise<boolean> {
  const { timeoutMs = 5000, intervalMs = 20 } = options;
  const end = Date.now() + scaled(timeoutMs);
  while (Date.now() < end) {
    if (await cond()) return true;
    await new Promise((r) => (intervalMs > 0 ? setTimeout(r, intervalMs) : setImmediate(r)));
  }
  return cond();
}
