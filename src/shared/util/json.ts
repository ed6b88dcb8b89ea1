// JSON helpers for what is journaled and restored.

/** Deep copy through JSON: what is journaled is exactly what is restored. */
export function cloneJson<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

/** The JSON text of copies made by cloneJsonKeepingText (never changed after: they are events' parts). */
const texts = new WeakMap<object, string>();

/**
 * cloneJson that remembers the copy's JSON text, so a writer serialising the copy again (the
 * journal, a checkpoint's snapshot) takes the text instead (stringifyReusing). The copy must not
 * be changed afterwards.
 */
export function cloneJsonKeepingText<T extends object>(value: T): T {
  const text = JSON.stringify(value);
  const copy = JSON.parse(text) as T;
  texts.set(copy, text);
  return copy;
}

/**
 * JSON.stringify of a plain object, each of whose values made by cloneJsonKeepingText is written
 * as its remembered text rather than serialised again. The same text as JSON.stringify gives.
 */
export function stringifyReusing(value: Record<string, unknown>): string {
  let out = '';
  for (const key of Object.keys(value)) {
    const v = value[key];
    const text = (typeof v === 'object' && v !== null ? texts.get(v) : undefined) ?? JSON.stringify(v);
    if (text === undefined) continue; // undefined, a function: left out, as JSON.stringify does
    out += (out === '' ? '{' : ',') + JSON.stringify(key) + ':' + text;
  }
  return out === '' ? '{}' : out + '}';
}

/** Copy own properties of journaled JSON onto a live object, never prototype keys. */
export function assignOwn<T extends object>(target: T, source: unknown): T {
  if (typeof source !== 'object' || source === null) return target;
  for (const [k, v] of Object.entries(source)) {
    if (k !== '__proto__' && k !== 'constructor' && k !== 'prototype') (target as Record<string, unknown>)[k] = v;
  }
  return target;
}
