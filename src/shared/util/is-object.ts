// The one test for "a plain JSON object" (not null, not a list) used when checking untrusted input.

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
