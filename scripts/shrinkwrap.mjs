// `npm pack` ships package-lock.json as npm-shrinkwrap.json (prepack writes it, postpack removes
// it): `npm i -g sop-*.tgz` then installs the tree the clone's `npm ci` tested, at the same
// versions and integrity hashes, and needs no registry metadata, so it works --offline from a
// cache `npm ci` filled. npm leaves a shrinkwrap's dev packages out (TypeScript, vitest, and the
// optional peers node-llama-cpp and @huggingface/transformers).
//   node scripts/shrinkwrap.mjs make | remove
import { copyFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..');
const shrinkwrap = join(root, 'npm-shrinkwrap.json');
const what = process.argv[2];
if (what === 'make') copyFileSync(join(root, 'package-lock.json'), shrinkwrap);
else if (what === 'remove') rmSync(shrinkwrap, { force: true });
else {
  process.stderr.write('usage: node scripts/shrinkwrap.mjs make | remove\n');
  process.exit(2);
}
