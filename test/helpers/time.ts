// The one factor every time limit of the tests scales with: SOP_TEST_TIME_SCALE (a number >= 1,
// default 1), set on a slow or busy machine (`SOP_TEST_TIME_SCALE=3 npm test`; .ci/run sets it
// from the load it sees). vitest's test and hook timeouts (vitest.config.ts), `until()`'s
// deadline, the CLI helpers' `timeout` and every limit a test gives in milliseconds go through
// `scaled()`. A limit is how long to wait before calling a test hung, never a speed to assert:
// tests wait for events (test/helpers/until.ts), and speed is measured by benchmarks.

function parseScale(raw: string | undefined): number {
  if (raw === undefined || raw.trim() === '') return 1;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 1) throw new Error(`SOP_TEST_TIME_SCALE must be a number >= 1, not ${JSON.stringify(raw)}`);
  return n;
}

/** The factor (SOP_TEST_TIME_SCALE, default 1). */
export const TIME_SCALE = parseScale(process.env.SOP_TEST_TIME_SCALE);

/** `ms` times the factor, rounded: a time limit of a test, on this machine. */
export function scaled(ms: number): number {
  return ms === Infinity ? Infinity : Math.round(ms * TIME_SCALE);
}
