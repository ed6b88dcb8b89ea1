// Where the installed package lives (for prompts/, schemas/, sops/), from src/ or dist/src/.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EngineError } from '../errors.js';

let cached: string | undefined;
export function packageRoot(): string {
  if (cached) return cached;
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'prompts')) || !existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new EngineError('cannot find the sop package root (prompts/ and package.json)', 'INTERNAL');
    dir = parent;
  }
  cached = dir;
  return dir;
}
