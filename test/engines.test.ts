// Issue 27 item 6: every package the lock installs accepts the Node versions package.json's
// `engines` promises, so `npm ci` on a supported Node prints no EBADENGINE warning. An upgrade that
// drops the oldest supported Node (as OpenTelemetry 3.x did, wanting Node >= 22.15) fails here.
import { readFileSync } from 'node:fs';
import semver from 'semver';
import { describe, expect, it } from 'vitest';

interface LockEntry {
  version?: string;
  engines?: Record<string, unknown> | string[];
  os?: string[];
  cpu?: string[];
}

const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { engines: { node: string } };
const lock = JSON.parse(readFileSync('package-lock.json', 'utf8')) as { packages: Record<string, LockEntry> };
const supported = pkg.engines.node;

/** The lock's packages with an `engines.node` range: [where, version, range]. */
const withNodeRange = Object.entries(lock.packages).flatMap(([where, e]) => {
  const range = e.engines && !Array.isArray(e.engines) ? e.engines.node : undefined;
  return where !== '' && typeof range === 'string' ? [{ where, version: e.version, range, e }] : [];
});

/** Whether a platform list (`os`, `cpu`: names, or `!name` to exclude) lets in this value. */
function allows(list: string[] | undefined, value: string): boolean {
  if (!list || list.length === 0) return true;
  if (list.some((x) => x === `!${value}`)) return false;
  const positive = list.filter((x) => !x.startsWith('!'));
  return positive.length === 0 || positive.includes(value);
}

const rejecting = (node: string, entries: typeof withNodeRange) =>
  entries.filter((x) => !semver.satisfies(node, x.range)).map((x) => `${x.where}@${x.version} wants node ${x.range}`);

describe("the dependencies accept every Node that package.json's engines names", () => {
  it('the lock records engines ranges to check', () => {
    // the check below means something only if the lock carries the packages' engines fields
    expect(withNodeRange.length).toBeGreaterThan(50);
    expect(withNodeRange.some((x) => x.where === 'node_modules/@opentelemetry/sdk-trace')).toBe(true);
  });

  it('the oldest supported Node satisfies every package in the lock', () => {
    const oldest = semver.minVersion(supported);
    expect(oldest, `engines.node "${supported}" has no lowest version`).not.toBeNull();
    expect(rejecting(oldest!.version, withNodeRange)).toEqual([]);
  });

  it.skipIf(!semver.satisfies(process.version, supported))(
    `this Node (${process.version}) satisfies every package installed on this platform`,
    () => {
      const here = withNodeRange.filter((x) => allows(x.e.os, process.platform) && allows(x.e.cpu, process.arch));
      expect(rejecting(process.version, here)).toEqual([]);
    },
  );
});
