/** A repeatable option's values as a list of strings (none: []). */
export const collect = (v: unknown): string[] => (v === undefined ? [] : Array.isArray(v) ? v.map(String) : [String(v)]);
