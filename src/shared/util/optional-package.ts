// The packages sop runs without until a feature needs them (package.json's optional
// peerDependencies: a default install leaves them out), and the one command that adds one where
// sop can import it: `npm install -g` beside a global install of sop, `npm install` in a project
// or clone. Outside the clone, sop's allowScripts does not apply, so the command says
// --ignore-scripts: onnxruntime-node's script would fetch CUDA from NuGet and node-llama-cpp's
// llama.cpp's source from GitHub, neither needed (README, Install).
import { existsSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { packageRoot } from './package-root.js';

/** The optional packages, at the versions sop is tested with (package.json's devDependencies pin them; its peerDependencies accept them). */
export const OPTIONAL_PACKAGES = {
  /** The in-process runtime of `--llm local:`. */
  'node-llama-cpp': '3.21.1',
  /** The `transformers:MODEL` embedder. */
  '@huggingface/transformers': '4.3.1',
} as const;

export type OptionalPackage = keyof typeof OPTIONAL_PACKAGES;

/** Whether an import failed because the package itself is not installed (not one of its own imports). */
export function isMissingPackage(err: unknown, name: string): boolean {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') return false;
  const message = (err as Error).message;
  return message.includes(`'${name}'`) || message.includes(`"${name}"`);
}

/**
 * The command that installs `name` where this copy of sop imports it from. `root` is sop's
 * package folder; `nodePrefix` is where npm puts global packages by default (Node's own prefix).
 */
export function addPackageCommand(name: OptionalPackage, root = packageRoot(), nodePrefix = dirname(dirname(process.execPath))): string {
  const spec = `${name}@${OPTIONAL_PACKAGES[name]}`;
  const parent = dirname(root);
  if (basename(parent) === 'node_modules') {
    // PREFIX/lib/node_modules/sop with PREFIX/bin/sop: a global install; a package beside it is found from it
    const lib = dirname(parent);
    const prefix = dirname(lib);
    if (basename(lib) === 'lib' && existsSync(join(prefix, 'bin', 'sop')))
      return prefix === nodePrefix
        ? `npm install -g --ignore-scripts ${spec}`
        : `npm install -g --prefix ${prefix} --ignore-scripts ${spec}`;
    return `npm install -E --ignore-scripts ${spec} (in ${lib})`;
  }
  return `npm install -E ${spec}`;
}
