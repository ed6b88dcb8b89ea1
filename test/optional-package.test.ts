// The optional packages (src/shared/util/optional-package.ts): a default install of sop leaves
// them out, and the one line that says one is missing names the command that adds it where that
// copy of sop imports it from.
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import semver from 'semver';
import { describe, expect, it } from 'vitest';
import { OPTIONAL_PACKAGES, addPackageCommand, isMissingPackage } from '../src/shared/util/optional-package.js';

const pkg = JSON.parse(readFileSync(join(process.cwd(), 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
  peerDependencies: Record<string, string>;
  peerDependenciesMeta: Record<string, { optional?: boolean }>;
};

/** A folder laid out as npm lays out a global install: PREFIX/lib/node_modules/sop and PREFIX/bin/sop. */
function globalInstall(): { prefix: string; root: string } {
  const prefix = mkdtempSync(join(tmpdir(), 'sop-prefix-'));
  const root = join(prefix, 'lib', 'node_modules', 'sop');
  mkdirSync(root, { recursive: true });
  mkdirSync(join(prefix, 'bin'));
  writeFileSync(join(prefix, 'bin', 'sop'), '');
  return { prefix, root };
}

describe('optional packages', () => {
  it('are optional peers (left out of a default install), tested at the versions the messages name', () => {
    for (const [name, version] of Object.entries(OPTIONAL_PACKAGES)) {
      expect(pkg.dependencies[name], name).toBeUndefined();
      expect(pkg.peerDependenciesMeta[name]?.optional, name).toBe(true);
      expect(semver.satisfies(version, pkg.peerDependencies[name]!), `${name}@${version}`).toBe(true);
      expect(semver.minVersion(pkg.devDependencies[name]!)?.version, name).toBe(version);
    }
  });

  it('name the command that adds one to this install', () => {
    const g = globalInstall();
    expect(addPackageCommand('node-llama-cpp', g.root, g.prefix)).toBe('npm install -g --ignore-scripts node-llama-cpp@3.21.1');
    expect(addPackageCommand('@huggingface/transformers', g.root, '/usr')).toBe(
      `npm install -g --prefix ${g.prefix} --ignore-scripts @huggingface/transformers@4.3.1`,
    );
    // a dependency of a project: installed in that project
    const project = mkdtempSync(join(tmpdir(), 'sop-project-'));
    expect(addPackageCommand('node-llama-cpp', join(project, 'node_modules', 'sop'), '/usr')).toBe(
      `npm install -E --ignore-scripts node-llama-cpp@3.21.1 (in ${project})`,
    );
    // the clone: its allowScripts decides the scripts
    expect(addPackageCommand('node-llama-cpp', process.cwd())).toBe('npm install -E node-llama-cpp@3.21.1');
  });

  it('tell a missing package from one that fails to load', () => {
    const missing = (what: string) =>
      Object.assign(new Error(`Cannot find package '${what}' imported from /x.js`), { code: 'ERR_MODULE_NOT_FOUND' });
    expect(isMissingPackage(missing('node-llama-cpp'), 'node-llama-cpp')).toBe(true);
    expect(isMissingPackage(missing('onnxruntime-node'), '@huggingface/transformers')).toBe(false); // installed, its own import broken
    expect(isMissingPackage(new Error('bad ELF header'), 'node-llama-cpp')).toBe(false);
  });
});
