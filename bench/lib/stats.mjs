// Small statistics and formatting helpers shared by the bench modules.

/** The q-quantile (0..1) of numbers, nearest-rank on a sorted copy. */
export function quantile(values, q) {
  if (values.length === 0) return NaN;
  const s = Float64Array.from(values).sort();
  const i = Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1));
  return s[i];
}

export const median = (values) => quantile(values, 0.5);
export const p95 = (values) => quantile(values, 0.95);
export const mean = (values) => (values.length ? values.reduce((a, b) => a + b, 0) / values.length : NaN);

/** Round to `digits` decimals (a number, for results.json). */
export const round = (x, digits = 1) => (Number.isFinite(x) ? Math.round(x * 10 ** digits) / 10 ** digits : x);

/** A row of the summary table. `pass` undefined = informational. */
export function row(figure, value, target = '', pass = undefined) {
  return { figure, value, target, status: pass === undefined ? '' : pass ? 'pass' : 'MISS' };
}

export const fmtUs = (us) => `${Math.round(us).toLocaleString('en-US')} µs`;
export const fmtMs = (ms) => `${ms >= 100 ? Math.round(ms).toLocaleString('en-US') : round(ms, 1)} ms`;
export const fmtMB = (kb) => `${round(kb / 1024, 0)} MB`;
export const pct = (x) => `${round(x * 100, 1)}%`;
