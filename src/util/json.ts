// JSON helpers for what is journaled and restored.

/** Deep copy through JSON: what is journaled is exactly what is restored. */
export function cloneJson<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

/** Copy own properties of journaled JSON onto a live object, never prototype keys. */
export function assignOwn<T extends object>(target: T, source: unknown): T {
  if (typeof source !== 'object' || source === null) return target;
  for (const [k, v] of Object.entries(source)) {
    if (k !== '__proto__' && k !== 'constructor' && k !== 'prototype') (target as Record<string, unknown>)[k] = v;
  }
  return target;
}
