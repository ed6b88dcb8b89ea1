// Adds to package-lock.json the platform-specific optional packages (e.g. @rollup/rollup-*)
// that this machine's npm leaves out when it writes the lock, so that `npm ci` on any
// machine accepts the lock. Run after `npm install` changes dependencies:
//   node scripts/complete-lock.mjs
// It asks the npm registry (npm view) for the missing packages' metadata; a registry mirror that
// does not carry another platform's binary gets an entry whose os/cpu/libc come from the
// package name (npm ci never downloads a package for another platform, it only needs the entry).
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';

const OS = ['android', 'darwin', 'freebsd', 'linux', 'openbsd', 'openharmony', 'win32', 'sunos', 'aix', 'netbsd'];
const CPU = ['arm64', 'arm', 'x64', 'ia32', 'loong64', 'ppc64', 'riscv64', 's390x', 'wasm32'];
function platformOf(name) {
  const parts = name.split('/').pop().split('-');
  const os = parts.find((p) => OS.includes(p));
  const cpu = parts.find((p) => CPU.includes(p));
  const libc = parts.some((p) => p.startsWith('musl'))
    ? 'musl'
    : parts.some((p) => p.startsWith('gnu')) && os === 'linux'
      ? 'glibc'
      : undefined;
  return { os, cpu, libc };
}

function view(name, range) {
  try {
    const out = execFileSync('npm', ['view', `${name}@${range}`, '--json', 'version', 'dist.integrity', 'os', 'cpu', 'libc', 'license'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const info = JSON.parse(out);
    const v = Array.isArray(info) ? info[info.length - 1] : info;
    return { version: v.version, integrity: v['dist.integrity'], os: v.os, cpu: v.cpu, libc: v.libc, license: v.license };
  } catch {
    const { os, cpu, libc } = platformOf(name);
    if (!os || !cpu || !/^\d+\.\d+\.\d+/.test(range))
      throw new Error(`cannot resolve ${name}@${range} and cannot tell its platform from its name`);
    return { version: range, os: [os], cpu: [cpu], ...(libc ? { libc: [libc] } : {}) };
  }
}

const lock = JSON.parse(readFileSync('package-lock.json', 'utf8'));
const packages = lock.packages;
let added = 0;
for (const [path, meta] of Object.entries(packages)) {
  for (const [name, range] of Object.entries(meta.optionalDependencies ?? {})) {
    const nested = `${path}/node_modules/${name}`;
    const top = `node_modules/${name}`;
    if (packages[nested] || packages[top]) continue;
    const v = view(name, range);
    packages[top] = {
      version: v.version,
      ...(v.integrity ? { integrity: v.integrity } : {}),
      ...(v.cpu ? { cpu: v.cpu } : {}),
      ...(v.license ? { license: v.license } : {}),
      ...(v.libc ? { libc: v.libc } : {}),
      optional: true,
      ...(v.os ? { os: v.os } : {}),
    };
    added++;
  }
}
const sorted = Object.fromEntries(Object.entries(packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a < b ? -1 : 1)));
lock.packages = sorted;
writeFileSync('package-lock.json', JSON.stringify(lock, null, 2) + '\n');
console.log(`added ${added} optional package entries`);
