// The commands the docs show are true: a user follows README.md, docs/*.md and each
// examples/*/README.md literally. This runs every documented command that works offline (a mock
// or cassette LLM, validate, list, graph, check, plan), checks that every `--flag` the docs name next
// to `sop COMMAND` is an option of that command, and that each example says plainly whether its
// cassette is hand-written.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { spawnCli, spawnCliAsync, requireBuiltCli } from './helpers/cli.js';
import { execAsync } from './helpers/exec.js';

const REPO = process.cwd();
const tmp = mkdtempSync(join(tmpdir(), 'sop-docs-'));
const counts = { commands: 0, ran: 0, flags: 0, examples: 0 };

afterAll(() => {
  rmSync(tmp, { recursive: true, force: true });
  console.log(
    `docs commands: ${counts.commands} command mentions, ${counts.flags} flags checked against --help, ` +
      `${counts.ran} offline commands run, ${counts.examples} example READMEs`,
  );
});

const examples = readdirSync(join(REPO, 'examples')).filter((d) => existsSync(join(REPO, 'examples', d, 'README.md')));
const docFiles = ['README.md', ...readdirSync(join(REPO, 'docs')).flatMap((f) => (f.endsWith('.md') ? [`docs/${f}`] : []))].concat(
  examples.map((d) => `examples/${d}/README.md`),
);

interface Block {
  file: string;
  line: number;
  lang: string;
  text: string;
}

/** Fenced code blocks of a Markdown file. */
function blocks(file: string): Block[] {
  const out: Block[] = [];
  let open: Block | undefined;
  readFileSync(join(REPO, file), 'utf8')
    .split('\n')
    .forEach((l, i) => {
      const fence = /^\s*```(\w*)/.exec(l);
      if (fence && !open) open = { file, line: i + 1, lang: fence[1]!, text: '' };
      else if (fence && open) {
        out.push(open);
        open = undefined;
      } else if (open) open.text += l + '\n';
    });
  return out;
}

/** Shell-like words of a command line: quotes kept together, a comment cut off. */
function words(line: string): string[] {
  const out: string[] = [];
  for (const m of line.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)) {
    if (m[3]?.startsWith('#')) break;
    out.push(m[1] ?? m[2] ?? m[3]!);
  }
  return out;
}

interface Mention {
  where: string;
  command: string;
  flags: string[];
}

/** `sop COMMAND --flag ...` in code blocks (with the CLI reference's indented option lines) and inline code. */
function mentions(): Mention[] {
  const out: Mention[] = [];
  const flagsOf = (text: string) => [...text.matchAll(/(?:^|[\s[(])(--[a-z][a-z0-9-]*)/g)].map((m) => m[1]!);
  for (const file of docFiles) {
    for (const b of blocks(file)) {
      if (!['', 'sh', 'bash', 'shell', 'text'].includes(b.lang)) continue;
      let current: Mention | undefined;
      b.text
        .replace(/\\\n\s*/g, ' ')
        .split('\n')
        .forEach((l, i) => {
          const cmd = /^(?:[A-Z_]+=\S+\s+)*(?:npm ci && )?(?:npx )?sop ([a-z]+)\b(.*)$/.exec(l);
          if (cmd) {
            // The command's own words end at a comment or at the wide gap before a description.
            const own = cmd[2]!.split(/\s#|\s{2,}/)[0]!;
            current = { where: `${file}:${b.line + i + 1}`, command: cmd[1]!, flags: flagsOf(own) };
            out.push(current);
          } else if (current && /^\s+--/.test(l)) current.flags.push(...flagsOf(l.trim().split(/\s{2,}/)[0]!));
          else if (!/^\s/.test(l)) current = undefined;
        });
    }
    readFileSync(join(REPO, file), 'utf8')
      .split('\n')
      .forEach((l, i) => {
        for (const m of l.matchAll(/`(?:npx )?sop ([a-z]+)\b([^`]*)`/g))
          out.push({ where: `${file}:${i + 1}`, command: m[1]!, flags: flagsOf(m[2]!) });
      });
  }
  return out;
}

const helps = new Map<string, { ok: boolean; text: string }>();
async function helpOf(command: string): Promise<{ ok: boolean; text: string }> {
  let h = helps.get(command);
  if (!h) {
    const r = await spawnCliAsync([command, '--help'], { encoding: 'utf8' });
    h = { ok: r.status === 0 && r.stdout.includes(`sop ${command}`), text: r.stdout };
    helps.set(command, h);
  }
  return h;
}

describe('every sop command and --flag the docs name exists', () => {
  it('is a command of the CLI, with that option in its --help', async () => {
    requireBuiltCli();
    const all = mentions();
    expect(all.length).toBeGreaterThan(100);
    const wrong: string[] = [];
    for (const m of all) {
      counts.commands++;
      const help = await helpOf(m.command);
      if (!help.ok) {
        wrong.push(`${m.where}: sop ${m.command}: no such command`);
        continue;
      }
      for (const flag of m.flags) {
        counts.flags++;
        const name = flag.replace(/^--no-/, '--');
        if (!new RegExp(`(^|\\s)${name}(\\s|$)`, 'm').test(help.text)) wrong.push(`${m.where}: sop ${m.command} has no ${flag}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('and every option of every command is named somewhere in README.md or docs/*.md', async () => {
    const top = (await spawnCliAsync(['--help'], { encoding: 'utf8' })).stdout;
    const commands = [...top.matchAll(/^ {2}sop ([a-z]+)/gm)].map((m) => m[1]!);
    expect(commands).toContain('run');
    const docs = ['README.md', ...docFiles.filter((f) => f.startsWith('docs/'))].map((f) => readFileSync(join(REPO, f), 'utf8')).join('\n');
    const undocumented: string[] = [];
    for (const command of commands) {
      for (const m of (await helpOf(command)).text.matchAll(/^ +(?:-[a-z], )?(--[a-z][a-z0-9-]*)/gm)) {
        const flag = m[1]!;
        if (flag === '--help' || flag === '--version') continue;
        if (!docs.includes(flag) && !docs.includes(flag.replace(/^--/, '--no-'))) undocumented.push(`sop ${command} ${flag}`);
      }
    }
    expect(undocumented).toEqual([]);
  });
});

/** Commands of code blocks that run offline, with output paths moved to a temporary folder. */
interface Runnable {
  where: string;
  args: string[];
}

function runnable(file: string, b: Block, n: number): Runnable[] {
  const out: Runnable[] = [];
  b.text
    .replace(/\\\n\s*/g, ' ')
    .split('\n')
    .forEach((l, i) => {
      const m = /^(?:[A-Z_]+=\S+\s+)*(?:npm ci && )?(?:npx )?sop (.*)$/.exec(l);
      if (!m) return;
      const w = words(m[1]!.replace(/\s>\s*\/dev\/null.*$/, ''));
      const [command, first] = w;
      const llm = w[w.indexOf('--llm') + 1] ?? '';
      const offline = w.includes('--llm')
        ? llm === 'mock' || llm.startsWith('replay:')
        : ['validate', 'list', 'graph', 'check', 'plan'].includes(command!);
      if (!offline) return;
      // A placeholder name (config.json) is not a file to run; a path that is not there is a doc error.
      if (first && !first.startsWith('-') && !existsSync(join(REPO, first)) && !existsSync(join(REPO, 'sops', `${first}.sop.json`))) {
        if (first.includes('/')) out.push({ where: `${file}:${b.line + i + 1}`, args: ['missing-file', first] });
        return;
      }
      const dir = join(tmp, `${file.replace(/\W/g, '_')}-${n}-${i}`);
      const args = w.map((word, k) => (['--out', '--record', '--memory-dir'].includes(w[k - 1]!) ? join(dir, word) : word));
      if (['run', 'sweep'].includes(command!) && !args.includes('--out')) args.push('--out', join(dir, 'runs'));
      out.push({ where: `${file}:${b.line + i + 1}`, args });
    });
  return out;
}

describe('every offline command of the docs runs', () => {
  const commands = docFiles.flatMap((file) =>
    blocks(file)
      .filter((b) => ['', 'sh', 'bash', 'shell'].includes(b.lang))
      .flatMap((b, n) => runnable(file, b, n)),
  );

  it('finds the examples and the documented offline commands', () => {
    expect(commands.length).toBeGreaterThanOrEqual(examples.length + 4);
  });

  for (const c of commands) {
    it(`${c.where}: sop ${c.args.join(' ').slice(0, 100)}`, async () => {
      expect(c.args[0], `${c.where} names a file that is not there`).not.toBe('missing-file');
      const r = await spawnCliAsync([...c.args], {
        cwd: REPO,
        encoding: 'utf8',
        stdin: 'ignore',
        timeout: 120_000,
      });
      counts.ran++;
      expect(r.status, `${c.where}\n${r.stderr}`).toBe(0);
      expect(r.stderr).not.toMatch(/^\s+at /m); // no stack trace
    });
  }
});

describe('each example says how its cassette was made, and its offline run works', () => {
  for (const ex of examples) {
    it(`examples/${ex}`, () => {
      counts.examples++;
      const readme = readFileSync(join(REPO, 'examples', ex, 'README.md'), 'utf8');
      const cassettes = readdirSync(join(REPO, 'examples', ex)).filter((f) => f.endsWith('.cassette.json'));
      const offline = blocks(`examples/${ex}/README.md`).flatMap((b, n) => runnable(`examples/${ex}/README.md`, b, n));
      if (cassettes.length === 0) {
        // an example with no cassette (a population run) dry-runs with the mock, and says its replies are placeholders
        expect(readme, `examples/${ex}/README.md says the mock's replies are placeholders`).toMatch(/placeholder/);
        expect(offline.some((c) => c.args.join(' ').includes('--llm mock'))).toBe(true);
        return;
      }
      for (const c of cassettes) {
        const { source } = JSON.parse(readFileSync(join(REPO, 'examples', ex, c), 'utf8')) as { source?: string };
        expect(readme, `examples/${ex}/README.md names ${c}`).toContain(c);
        if (source === 'hand-written') expect(readme).toMatch(/(hand-written|written by hand)[^]*?not model\s+output/);
        else expect(source).toMatch(/^recorded(: .+)?$/); // "recorded: WHAT" names what answered (a local model)
        if (source?.startsWith('recorded')) expect(readme).toMatch(/recorded/);
      }
      // The README's offline command replays that cassette (and is run above).
      expect(offline.some((c) => c.args.some((a) => a === `replay:examples/${ex}/${cassettes[0]}`))).toBe(true);
    });
  }
});

describe('the links of the docs lead somewhere', () => {
  it('every relative link names a file of the repository, and every #anchor a heading of it', () => {
    // GitHub's heading ids: lower case, punctuation dropped, spaces as hyphens.
    const slug = (h: string) =>
      h
        .replace(/`/g, '')
        .trim()
        .toLowerCase()
        .replace(/[^\p{L}\p{N}\s_-]/gu, '')
        .replace(/\s/g, '-');
    const headings = (file: string) =>
      new Set(
        readFileSync(file, 'utf8')
          .split('\n')
          .filter((l) => /^#{1,6} /.test(l))
          .map((l) => slug(l.replace(/^#+ /, ''))),
      );
    const broken: string[] = [];
    let links = 0;
    for (const file of docFiles) {
      for (const m of readFileSync(join(REPO, file), 'utf8').matchAll(/\]\(([^)#\s]*)(?:#([^)\s]+))?\)/g)) {
        const [, path, anchor] = m;
        if (/^[a-z]+:/.test(path!)) continue; // https:, mailto:
        links++;
        const target = path ? join(REPO, file, '..', path) : join(REPO, file);
        if (!existsSync(target)) broken.push(`${file}: ${path} does not exist`);
        else if (anchor && target.endsWith('.md') && !headings(target).has(anchor))
          broken.push(`${file}: ${path}#${anchor}: no such heading`);
      }
    }
    expect(links).toBeGreaterThan(50);
    expect(broken).toEqual([]);
  });
});

describe('the library examples of README.md and docs/api.md run', () => {
  // Fragments of docs/api.md use `sop` and `runSop` from the example before them.
  const prelude = "import { loadSop, runSop } from 'sop';\nconst sop = loadSop('examples/debate/debate.sop.json');\n";
  const js = (file: string) => blocks(file).filter((b) => b.lang === 'js' && !b.text.includes("from 'ws'")); // ws: not a dependency
  const snippets = [...js('README.md'), ...js('docs/api.md')];

  it('finds them', () => expect(snippets.length).toBeGreaterThanOrEqual(4));
  for (const b of snippets) {
    it(`${b.file}:${b.line}`, async () => {
      const code = b.text.includes("from 'sop'") ? b.text : prelude + b.text;
      const r = await execAsync(process.execPath, ['--input-type=module', '-e', code], { cwd: REPO, encoding: 'utf8', timeout: 60_000 });
      expect(r.status, r.stderr).toBe(0);
      if (b.text.includes('// finished')) expect(r.stdout.trim().split('\n').at(-1)).toBe('finished');
    });
  }
});

describe('output piped into a reader that stops early', () => {
  it('sop show RUN | head ends quietly: exit 0, no EPIPE stack trace', async () => {
    const out = join(tmp, 'piped');
    // 80 turns of the mock: a journal whose events are far more than a pipe holds (64 KiB), so the
    // CLI is still writing when the reader closes the pipe, and meets EPIPE
    const run = await spawnCliAsync(
      ['run', 'bench/fixtures/memory-chat.sop.json', '--llm', 'mock', '--max-turns', '80', '--out', out, '--quiet'],
      {
        cwd: REPO,
        encoding: 'utf8',
      },
    );
    expect(run.status, run.stderr).toBe(0);
    const dir = join(out, readdirSync(out)[0]!);
    const whole = await spawnCliAsync(['show', dir, '--format', 'events'], { cwd: REPO, stdin: 'ignore' });
    expect(whole.status, whole.stderr).toBe(0);
    expect(Buffer.byteLength(whole.stdout)).toBeGreaterThan(256 * 1024);
    const child = spawnCli(['show', dir, '--format', 'events'], { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    // Like `head -1`: read the first chunk, then close the pipe.
    await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
    child.stdout.destroy();
    const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
    expect(stderr).not.toMatch(/EPIPE|^\s+at /m);
    expect(code).toBe(0);
  });
});
