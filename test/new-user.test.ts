// What a new user meets first (issue 11, §6): a clone tests on its own (nothing reads a folder
// beside the repository, the test corpus carries its licence and provenance), and npm runs in
// the project without warnings about its configuration or undecided install scripts.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONFORMANCE, REPO } from './helpers/v1.js';

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? filesUnder(p) : [p];
  });
}

describe('a clone stands alone', () => {
  it('no source, test, script, bench or doc reads or cites the shared folder beside the repository', () => {
    // Built from pieces so that this file does not match itself. The folder beside the repository
    // holds DESIGN.md, reference/, conformance/, seeds/ and hooks/; src/shared/ (the shared layer
    // of the code, once src/ is in layer folders) is not it.
    const beside = '(/(DESIGN|reference|conformance|seeds|hooks)\\b|/?$|[\'"`])';
    const outside = new RegExp(['\\.\\./' + 'shared' + beside, 'shared/' + '(reference|conformance|seeds)'].join('|'));
    const files = ['src', 'test', 'scripts', 'bench', 'docs']
      .flatMap((d) => filesUnder(join(REPO, d)))
      .filter((f) => /\.(ts|mjs|js|json|md|hbs)$/.test(f))
      .concat(join(REPO, 'README.md'));
    expect(files.length).toBeGreaterThan(100);
    const hits = files.flatMap((f) =>
      readFileSync(f, 'utf8')
        .split('\n')
        .flatMap((line, i) => (outside.test(line) ? [`${f.slice(REPO.length + 1)}:${i + 1}: ${line.trim()}`] : [])),
    );
    expect(hits).toEqual([]);
  });

  it('the Agents 1.0 corpus is in the repository, with its licence and provenance, unchanged', () => {
    expect(CONFORMANCE.startsWith(REPO)).toBe(true);
    expect(readFileSync(join(CONFORMANCE, 'LICENSE'), 'utf8')).toMatch(/Apache License\s+Version 2\.0/);
    const provenance = readFileSync(join(CONFORMANCE, 'PROVENANCE.md'), 'utf8');
    expect(provenance).toMatch(/aiwaves-cn\/agents.*72852a31/s);
    // Every config is listed with its checksum, and matches it.
    const listed = [...provenance.matchAll(/^([0-9a-f]{64}) {2}(\S+)$/gm)];
    const configs = filesUnder(CONFORMANCE)
      .filter((f) => f.endsWith('.json'))
      .map((f) => f.slice(CONFORMANCE.length + 1))
      .sort();
    expect(listed.map((m) => m[2]).sort()).toEqual(configs);
    for (const [, sum, file] of listed) {
      expect(
        createHash('sha256')
          .update(readFileSync(join(CONFORMANCE, file!)))
          .digest('hex'),
        file,
      ).toBe(sum);
    }
    expect(existsSync(join(REPO, 'docs', 'agents-v1-semantics.md'))).toBe(true);
  });
});

const npm = spawnSync('npm', ['--version'], { encoding: 'utf8' });
const hasNpm = npm.status === 0;
if (!hasNpm) console.warn('npm is not on PATH: the npm configuration test is skipped');

describe('npm in the project', () => {
  it('every dependency with an install script is decided in allowScripts', () => {
    const lock = JSON.parse(readFileSync(join(REPO, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, { hasInstallScript?: boolean }>;
    };
    const withScripts = Object.entries(lock.packages)
      .filter(([, p]) => p.hasInstallScript)
      .map(([k]) => k.replace(/^.*node_modules\//, ''))
      .sort();
    const pkg = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { allowScripts?: Record<string, boolean> };
    expect(withScripts.length).toBeGreaterThan(0);
    expect(Object.keys(pkg.allowScripts ?? {}).sort()).toEqual(withScripts);
    expect(pkg.allowScripts?.['onnxruntime-node']).toBe(false); // its script only fetches CUDA providers from NuGet
  });

  it.skipIf(!hasNpm)('reads the project .npmrc without an unknown-config warning', () => {
    const r = spawnSync('npm', ['config', 'get', 'fund'], { cwd: REPO, encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).not.toMatch(/Unknown project config/);
  });
});
