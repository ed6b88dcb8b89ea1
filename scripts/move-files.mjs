#!/usr/bin/env node
// Moves files of the repository, one mechanical commit: `git mv` each, and every reference to a
// moved file (or from one) is rewritten, and nothing else.
//
//   node scripts/move-files.mjs --dry-run FROM=TO ...   # print what would change; touches nothing
//   node scripts/move-files.mjs FROM=TO ...             # move and rewrite
//
// FROM and TO are paths from the repository's root (src/features/actions/executors/types.ts=src/core/commands/executor.ts).
// Run it on a clean checkout at the repository's root. What is rewritten, in every tracked text file:
//   - relative module specifiers (import/export ... from, import(), side-effect imports, vi.mock,
//     require()) that name a moved file, and those of a moved file, recomputed from its new place;
//   - the moved files' repository paths in any text (comments, docs, links), as .ts or .js.
// Then `npm run lint`, commit ("move ... (scripts/move-files.mjs)"), and list the commit in
// .git-blame-ignore-revs (see scripts/relayer.mjs, which made the earlier layer-folder move).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { posix } from 'node:path';

const args = process.argv.slice(2);
const DRY = args.includes('--dry-run');
const print = (s) => process.stdout.write(`${s}\n`);
const git = (...a) => execFileSync('git', a, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
const fail = (message, list = []) => {
  process.stderr.write(`move-files: ${message}${list.length ? `\n  ${list.join('\n  ')}` : ''}\n`);
  process.exit(1);
};

const moves = new Map();
for (const a of args.filter((x) => x !== '--dry-run')) {
  const [from, to, extra] = a.split('=');
  if (!from || !to || extra !== undefined) fail(`expected FROM=TO, not "${a}"`);
  moves.set(posix.normalize(from), posix.normalize(to));
}
if (moves.size === 0) fail('name the moves: FROM=TO ...');
const tracked = git('ls-files', '-z').split('\0').filter(Boolean);
const trackedSet = new Set(tracked);
for (const [from, to] of moves) {
  if (!trackedSet.has(from)) fail(`${from} is not a tracked file`);
  if (existsSync(to)) fail(`${to} exists already`);
}
if (!DRY && git('status', '--porcelain').trim()) fail('the worktree has changes or untracked files; commit or stash them first');

const TEXT = /\.(ts|mts|cts|js|mjs|cjs|json|md|py|sh|ya?ml|txt|hbs|html|css)$/;
const CODE = /\.(ts|mts|cts|js|mjs|cjs)$/;
const SPECIFIER = /(\bfrom\s*|\bimport\s*\(\s*|\bimport\s+|\b(?:vi\.mock|vi\.importActual|require)\s*\(\s*)(['"])(\.{1,2}\/[^'"]+)\2/g;

/** The tracked file a relative specifier of `file` names (a .js specifier names its .ts source), or undefined. */
function target(file, spec) {
  const p = posix.normalize(posix.join(posix.dirname(file), spec));
  for (const c of [p, p.replace(/\.js$/, '.ts'), p.replace(/\.mjs$/, '.mts')]) if (trackedSet.has(c)) return c;
  return undefined;
}

function rewriteSpecifiers(text, file) {
  const newFile = moves.get(file) ?? file;
  return text.replace(SPECIFIER, (all, head, q, spec) => {
    const t = target(file, spec);
    if (!t || (!moves.has(t) && newFile === file)) return all;
    const moved = moves.get(t) ?? t;
    const ext = spec.endsWith('.js') && moved.endsWith('.ts') ? '.js' : '';
    let rel = posix.relative(posix.dirname(newFile), ext ? moved.replace(/\.ts$/, '.js') : moved);
    if (!rel.startsWith('.')) rel = `./${rel}`;
    return `${head}${q}${rel}${q}`;
  });
}

const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const mentions = [...moves].flatMap(([from, to]) => [
  [new RegExp(`(?<![\\w-])${escape(from)}(?![\\w-])`, 'g'), to],
  [new RegExp(`(?<![\\w-])${escape(from.replace(/\.ts$/, '.js'))}(?![\\w-])`, 'g'), to.replace(/\.ts$/, '.js')],
]);
const rewriteMentions = (text) => mentions.reduce((t, [re, to]) => t.replace(re, to), text);

const SKIP = new Set(['package-lock.json', 'scripts/move-files.mjs', 'scripts/relayer.mjs', '.git-blame-ignore-revs']);
const edits = new Map();
for (const file of tracked) {
  if (SKIP.has(file) || !TEXT.test(file) || !existsSync(file)) continue;
  const text = readFileSync(file, 'utf8');
  const next = rewriteMentions(CODE.test(file) ? rewriteSpecifiers(text, file) : text);
  if (next !== text) edits.set(file, next);
}

for (const [from, to] of moves) print(`  ${from} -> ${to}`);
print(`${moves.size} files move; ${edits.size} files are rewritten${DRY ? ':' : '.'}`);
if (DRY) {
  for (const f of edits.keys()) print(`  ${f}`);
  process.exit(0);
}
for (const [from, to] of moves) {
  mkdirSync(posix.dirname(to), { recursive: true });
  git('mv', from, to);
}
for (const [file, text] of edits) writeFileSync(moves.get(file) ?? file, text);
const written = [...edits.keys()].map((f) => moves.get(f) ?? f);
if (existsSync('node_modules/.bin/prettier') && written.length)
  execFileSync('node_modules/.bin/prettier', ['--write', '--log-level', 'warn', '--ignore-unknown', ...written], { stdio: 'inherit' });
print('Next: node scripts/gen-schema.mjs && npm run lint, then commit and list the commit in .git-blame-ignore-revs.');
