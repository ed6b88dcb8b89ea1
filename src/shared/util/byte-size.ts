// Sizes given on a command line or to the API ("2GB", "512MiB", "1.5 GB", "1048576"): parsed to
// bytes, one line when the text is not a size. GB, MB, KB are powers of 1000 and GiB, MiB, KiB
// powers of 1024, as DuckDB reads them; a bare number is bytes.
import { EngineError } from '../errors.js';

const UNITS: Record<string, number> = {
  b: 1,
  kb: 1e3,
  mb: 1e6,
  gb: 1e9,
  tb: 1e12,
  kib: 1024,
  mib: 1024 ** 2,
  gib: 1024 ** 3,
  tib: 1024 ** 4,
};

/** Bytes of a size such as "2GB" or "512MiB"; `what` names the option in the error ("--memory-limit"). */
export function parseByteSize(text: string | number, what: string): number {
  if (typeof text === 'number') {
    if (Number.isFinite(text) && text > 0) return Math.floor(text);
    throw new EngineError(`${what} must be a size above 0, such as 2GB or 512MiB (got ${text})`, 'OPTION');
  }
  const m = /^\s*(\d+(?:\.\d+)?)\s*([kmgt]i?b|b)?\s*$/i.exec(text);
  const bytes = m ? Math.floor(Number(m[1]) * UNITS[(m[2] ?? 'b').toLowerCase()]!) : NaN;
  if (!(bytes > 0))
    throw new EngineError(`${what} must be a size such as 2GB, 512MiB or 1500000000 (got "${text.slice(0, 40)}")`, 'OPTION');
  return bytes;
}

/** A size for a message: "2 GiB" (a whole number of MiB, GiB or TiB), else "2.1 GB", "300 MB". */
export function showBytes(n: number): string {
  for (const [unit, size] of [
    ['TiB', 1024 ** 4],
    ['GiB', 1024 ** 3],
    ['MiB', 1024 ** 2],
  ] as const)
    if (n >= size && n % size === 0) return `${n / size} ${unit}`;
  for (const [unit, size] of [
    ['TB', 1e12],
    ['GB', 1e9],
    ['MB', 1e6],
    ['KB', 1e3],
  ] as const)
    if (n >= size) return `${Number((n / size).toFixed(1))} ${unit}`;
  return `${n} bytes`;
}
