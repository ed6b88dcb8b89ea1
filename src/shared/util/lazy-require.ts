// A CommonJS package loaded at its first use, synchronously (require, from this package): what only
// some runs need (the population feature's CSV parser, graph library and JSON-schema compiler; the
// prompt templates' Handlebars) is not loaded by `import 'sop'` (bench/startup.mjs), and the code
// that uses it stays synchronous. Type-only imports of the package give its types.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** A function that returns the package `id`, required the first time it is called. */
export function lazyRequire<T>(id: string): () => T {
  let mod: T | undefined;
  return () => (mod ??= require(id) as T);
}
