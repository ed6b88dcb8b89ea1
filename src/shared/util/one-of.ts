// The one test for "one of these names" (a member of a union of strings, in untrusted input).

/** Whether `value` is one of `names`. */
export function isOneOf<T extends string>(names: readonly T[], value: unknown): value is T {
  return typeof value === 'string' && (names as readonly string[]).includes(value);
}
