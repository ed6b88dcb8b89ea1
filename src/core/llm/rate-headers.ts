// What a server's answer says about when to send the next request: `retry-after` /
// `retry-after-ms` (a 429 or 503), and OpenAI's `x-ratelimit-remaining-requests` /
// `-tokens` with their `x-ratelimit-reset-requests` / `-tokens` ("1s", "6m0s", "20ms").
// A reply's headers are untrusted: a value that does not parse is ignored.
import { parseRetryAfter } from './retry.js';

export interface HeaderGetter {
  get(name: string): string | null;
}

/** A Go-style duration ("1s", "6m0s", "1h2m3.5s", "250ms") or a number of seconds, in ms; undefined when it is neither. */
export function parseResetDuration(value: string | null | undefined): number | undefined {
  const v = value?.trim();
  if (!v) return undefined;
  if (/^\d+(\.\d+)?$/.test(v)) return Math.round(Number(v) * 1000);
  if (v.length > 40 || !/^(\d+(\.\d+)?(h|ms|m|s|us|µs|ns))+$/.test(v)) return undefined;
  const unit: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1000, ms: 1, us: 1e-3, µs: 1e-3, ns: 1e-6 };
  let ms = 0;
  for (const [, n, u] of v.matchAll(/(\d+(?:\.\d+)?)(h|ms|m|s|us|µs|ns)/g)) ms += Number(n) * unit[u!]!;
  return Math.round(ms);
}

/**
 * How long every call to this server should wait before the next request, in ms (0: no wait):
 * the longest of the answer's retry-after and the resets of an exhausted request or token quota.
 */
export function admissionWait(headers: HeaderGetter | undefined, now = Date.now()): number {
  if (!headers) return 0;
  let wait = parseRetryAfter(headers, now) ?? 0;
  for (const kind of ['requests', 'tokens']) {
    const remaining = headers.get(`x-ratelimit-remaining-${kind}`)?.trim();
    if (remaining === undefined || !/^\d+$/.test(remaining) || Number(remaining) > 0) continue;
    // an exhausted quota with no reset said: a second, as OpenAI's per-second buckets
    wait = Math.max(wait, parseResetDuration(headers.get(`x-ratelimit-reset-${kind}`)) ?? 1000);
  }
  return wait;
}
