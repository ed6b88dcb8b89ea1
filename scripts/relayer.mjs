#!/usr/bin/env node
// Moves src/ into its layer folders (docs/architecture.md#layers), one mechanical commit.
//
//   node scripts/relayer.mjs --dry-run   # print the map and what would change; touches nothing
//   node scripts/relayer.mjs             # git mv every file of src/, rewrite every reference
//
// Run it on a clean checkout (no staged, changed or untracked files) at the repository's root,
// after merging the branches in flight: it places the files that exist when it runs, by folder,
// from the map of eslint.layers.js (the one list of which folder is in which layer), and stops,
// changing nothing, on any tracked file of src/ it cannot place (a folder the lint's map does not
// name: add it there first). Then:
//
//   node scripts/gen-schema.mjs && npm run lint && npm run build && npm test
//   (and say in docs/architecture.md that the move is done: its "Known debt" paragraph)
//   git add -A && git commit -m "move src/ into layer folders (scripts/relayer.mjs)"
//   git rev-parse HEAD >> .git-blame-ignore-revs      # with a comment line above it, e.g.
//                                                     # "# src/ moved into layer folders"
//   git add .git-blame-ignore-revs && git commit -m "blame: ignore the layer-folder move"
//   git config blame.ignoreRevsFile .git-blame-ignore-revs   # once per clone (GitHub reads the file itself)
//
// `git log --follow FILE` and `git blame` (with the ignore file) see through the move, since it
// changes no line but the paths it rewrites.
//
// THE TARGET MAP (derived from eslint.layers.js; `--dry-run` prints it in full):
//   shared   src/errors.ts -> src/shared/errors.ts, src/util/ -> src/shared/util/, and the
//            shared files of src/io/ and src/workspace/ -> src/shared/io/, src/shared/workspace/
//   format   src/sop/ -> src/format/sop/
//   core     src/X/ -> src/core/X/ (llm, memory, environment, agent, components, runtime, prompt,
//            workspace), the core files of src/io/ -> src/core/io/
//   features a feature's folder of its own name becomes its folder, its other folders go inside it
//            under their names, its single files go into it:
//              src/actions/ -> src/features/actions/, src/executors/ -> src/features/actions/executors/
//              src/journal/ -> src/features/journal/, src/io/run-folder.ts -> src/features/journal/run-folder.ts
//              src/cost/ -> src/features/cost/, src/mcp/ -> src/features/mcp/, src/telemetry/ -> src/features/telemetry/
//              src/compat/ -> src/features/agents-v1/compat/, src/import/ -> src/features/agents-v1/import/
//              src/scientist/ -> src/features/scientist/, src/taskboard/ -> src/features/scientist/taskboard/,
//              src/worldmodel/ -> src/features/scientist/worldmodel/
//              src/population/ -> src/features/population/, src/worlds/ -> src/features/population/worlds/
//   api      src/api/ stays, src/engine/ -> src/api/engine/, src/loader/ -> src/api/loader/;
//            src/index.ts and src/extend.ts stay (the package's entry points: package.json's
//            exports and types do not change)
//   apps     src/cli/ -> src/apps/cli/, src/view/ -> src/apps/view/, src/sweep/ -> src/apps/sweep/
//
// WHAT IS REWRITTEN, in every tracked text file (package-lock.json aside):
//   - relative module specifiers of the moved files (import/export ... from, import(), side-effect
//     imports, vi.mock and friends, require(), new URL('...', import.meta.url)), recomputed from
//     each file's new place; each must resolve to an existing file (or a generated one);
//   - repository paths under src/ and dist/src/ in any text: imports of test/ and bench/
//     ('../src/...', '../dist/src/...'), eslint.layers.js, package.json (bin, files), .gitignore,
//     scripts/gen-schema.mjs's outputs, vitest.config.ts, test helpers, docs and README links and
//     names, comments; folder names, files and globs (src/executors/session/*.py);
//   - the same paths as path segments ('dist', 'src', 'cli', 'main.js') and escaped in regular
//     expressions (dist\/src\/prompt\/templates\.js, and dist\/src\/(a\/...|b\/...) alternations).
// A path under src/ that names nothing that exists and no folder of the map (a mention of another
// project's src/) is left as it is and listed. After the rewrite every file is scanned again: any
// reference the map would still change stops the script with the list (nothing is committed by it).
// Generated files (*.generated.*, ignored by git) are deleted from the old folders, and dist/ is
// deleted: `node scripts/gen-schema.mjs` and `npm run build` make them again at the new places.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { posix } from 'node:path';

const DRY = process.argv.includes('--dry-run');
const print = (s) => process.stdout.write(`${s}\n`);
const git = (...args) => execFileSync('git', args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
const fail = (message, list = []) => {
  process.stderr.write(`relayer: ${message}${list.length ? `\n  ${list.join('\n  ')}` : ''}\n`);
  process.exit(1);
};

// --- preconditions ---------------------------------------------------------------------------

if (!existsSync('package.json') || JSON.parse(readFileSync('package.json', 'utf8')).name !== 'sop' || !existsSync('eslint.layers.js'))
  fail('run me at the root of the sop repository (package.json, eslint.layers.js)');
for (const layer of ['shared', 'format', 'core', 'features', 'apps'])
  if (existsSync(`src/${layer}`))
    fail(`src/${layer}/ exists: src/ is already in layer folders (or half-moved); start from a clean checkout`);
if (!DRY) {
  const dirty = git('status', '--porcelain').trim();
  if (dirty) fail('the worktree has changes or untracked files; commit or stash them first:', dirty.split('\n').slice(0, 20));
}

// --- the map ---------------------------------------------------------------------------------

/** FEATURES and LAYERS of eslint.layers.js (LAYERS is not exported: the module is read with an export added). */
async function layerMap() {
  const text = readFileSync('eslint.layers.js', 'utf8');
  if (!/^const LAYERS = /m.test(text) || !/^export const FEATURES = /m.test(text))
    fail('eslint.layers.js: expected `export const FEATURES = ...` and `const LAYERS = ...`');
  const source = /^export\s*\{\s*LAYERS\b/m.test(text) || /^export const LAYERS/m.test(text) ? text : `${text}\nexport { LAYERS };\n`;
  const mod = await import(`data:text/javascript;base64,${Buffer.from(source).toString('base64')}`);
  return { FEATURES: mod.FEATURES, LAYERS: mod.LAYERS };
}

const ENTRY_POINTS = new Set(['src/index.ts', 'src/extend.ts']);

/** Every entry of the lint's map with its new place: files (exact) and folders (with what is under them). */
function targets({ FEATURES, LAYERS }) {
  const files = new Map();
  const folders = new Map();
  const add = (from, to) => {
    const isFile = /\.[a-z]+$/.test(posix.basename(from));
    const map = isFile ? files : folders;
    if (map.has(from) && map.get(from) !== to) fail(`eslint.layers.js names ${from} twice, for ${map.get(from)} and ${to}`);
    map.set(from, to);
  };
  const under = (p) => {
    if (!p.startsWith('src/')) fail(`eslint.layers.js: ${p} is not under src/`);
    return p.slice('src/'.length);
  };
  for (const [layer, paths] of Object.entries(LAYERS)) {
    for (const p of paths) {
      if (ENTRY_POINTS.has(p)) add(p, p);
      else if (layer === 'api' && p === 'src/api') add(p, p);
      else add(p, `src/${layer}/${under(p)}`);
    }
  }
  for (const [feature, paths] of Object.entries(FEATURES)) {
    for (const p of paths) {
      const rest = under(p);
      const isFile = /\.[a-z]+$/.test(posix.basename(p));
      if (isFile) add(p, `src/features/${feature}/${posix.basename(p)}`);
      else if (rest === feature) add(p, `src/features/${feature}`);
      else add(p, `src/features/${feature}/${rest}`);
    }
  }
  // longest folder first, so a nested entry wins over its parent
  const folderList = [...folders].sort((a, b) => b[0].length - a[0].length);
  return { files, folders: folderList };
}

const map = targets(await layerMap());
/** File entries by their module path without its extension. */
const fileStems = new Map(
  [...map.files].map(([from, to]) => [from.replace(/\.(ts|js|mts|mjs)$/, ''), to.replace(/\.(ts|js|mts|mjs)$/, '')]),
);

/** The new place of a path under src/ (a file, a folder, or a glob), or null when the map does not place it. */
function mapSrc(p) {
  const trailing = p.endsWith('/') && p.length > 1 ? '/' : '';
  const path = trailing ? p.slice(0, -1) : p;
  // a file entry names its module whatever the extension: src/errors.ts, src/errors.js, src/index.d.ts
  const ext = /(\.d)?\.(ts|js|mts|mjs)(\.map)?$/.exec(path);
  if (ext) {
    const to = fileStems.get(path.slice(0, ext.index));
    if (to !== undefined) return to + ext[0];
  }
  for (const [from, to] of map.folders) if (path === from || path.startsWith(`${from}/`)) return to + path.slice(from.length) + trailing;
  return null;
}

/** The new place of a repository path (src/..., dist/src/..., anything else as it is), or null for an unplaced src/ path. */
function mapRepo(p) {
  if (p.startsWith('dist/src/') || p === 'dist/src') {
    const m = mapSrc(p.slice('dist/'.length));
    return m === null ? null : `dist/${m}`;
  }
  if (p.startsWith('src/')) return mapSrc(p);
  return p;
}

// --- the moves -------------------------------------------------------------------------------

const tracked = git('ls-files', '-z').split('\0').filter(Boolean).sort();
const srcFiles = tracked.filter((f) => f.startsWith('src/'));
const moves = new Map();
const unplaced = [];
for (const f of srcFiles) {
  const to = mapSrc(f);
  if (to === null) unplaced.push(f);
  else moves.set(f, to);
}
if (unplaced.length)
  fail('these files of src/ are in no folder of eslint.layers.js; place their folders there first (nothing was changed):', unplaced);
{
  const seen = new Map();
  const clashes = [];
  for (const [from, to] of moves) {
    if (seen.has(to)) clashes.push(`${seen.get(to)} and ${from} -> ${to}`);
    seen.set(to, from);
    if (to !== from && tracked.includes(to) && !moves.has(to)) clashes.push(`${from} -> ${to}, which exists`);
  }
  if (clashes.length) fail('two files would land on one path (nothing was changed):', clashes);
}

// --- the rewrite -----------------------------------------------------------------------------

const TEXT = /\.(ts|mts|cts|js|mjs|cjs|json|md|py|sh|ya?ml|txt|hbs|html|css)$|^\.[\w-]+$|(^|\/)[^./]+$/;
const CODE = /\.(ts|mts|cts|js|mjs|cjs)$/;
const trackedSet = new Set(tracked);
const trackedDirs = new Set(
  tracked.flatMap((f) =>
    f
      .split('/')
      .slice(0, -1)
      .map((_, i, a) => a.slice(0, i + 1).join('/')),
  ),
);
const left = new Set(); // src/ paths the map does not place (mentions of other projects), listed
const problems = [];
/** Set for the check after the move: paths are only compared with what the map would make of them. */
let checking = false;

/** Whether a repository path (old layout) names something: a tracked file or folder, its .ts source, or a generated file. */
function exists(p) {
  const clean = p.replace(/\/$/, '');
  if (trackedSet.has(clean) || trackedDirs.has(clean)) return true;
  if (/\.js$/.test(clean) && (trackedSet.has(clean.replace(/\.js$/, '.ts')) || trackedSet.has(clean.replace(/\.js$/, '.mts')))) return true;
  if (/\.generated\./.test(clean)) return true;
  if (clean.startsWith('dist/')) return exists(clean.slice('dist/'.length)) || clean === 'dist';
  return existsSync(clean) && !clean.startsWith('node_modules');
}

/** A glob under src/ (src/executors/session/*.py): mapped when every file it matches lands in one folder. */
function mapGlob(p) {
  const re = new RegExp(
    `^${p
      .replace(/[.+^${}()|[\]\\]/g, '\\$&')
      .replace(/\*\*\/?/g, '<any>')
      .replace(/\*/g, '[^/]*')
      .replace(/<any>/g, '.*')}$`,
  );
  const hits = srcFiles.filter((f) => re.test(f));
  if (hits.length === 0) return null;
  const dirs = new Set(hits.map((f) => posix.dirname(moves.get(f))));
  const oldDirs = new Set(hits.map((f) => posix.dirname(f)));
  if (dirs.size !== 1 || oldDirs.size !== 1 || !p.startsWith(`${[...oldDirs][0]}/`)) return null;
  return `${[...dirs][0]}/${p.slice([...oldDirs][0].length + 1)}`;
}

/** The new text of a mention of a repository path (src/..., dist/src/...), or undefined to leave it. */
function rewritePath(token, where) {
  if (checking) {
    // after the move: a path the map still changes names an old folder
    const plain = token.includes('*') ? token.slice(0, token.indexOf('*')).replace(/[^/]*$/, '') : token;
    const m = mapRepo(plain);
    return m === null || m === plain ? undefined : `${m} (was ${token})`;
  }
  if (token.includes('*')) {
    const dist = token.startsWith('dist/') ? 'dist/' : '';
    if (!/^(dist\/)?src\/[^*]*\//.test(token)) return undefined; // src/**/*.ts: every file, wherever it is
    const m = mapGlob(token.slice(dist.length));
    if (m === null) {
      problems.push(`${where}: the glob ${token} matches files that land in different folders (or none); fix it by hand`);
      return undefined;
    }
    return dist + m;
  }
  const m = mapRepo(token);
  if (m === null) {
    if (token.replace(/\/$/, '') !== 'src' && token.replace(/\/$/, '') !== 'dist/src') left.add(`${where}: ${token}`);
    return undefined;
  }
  return m;
}

/** src/... and dist/src/... in any text (optionally after ./ or ../ segments): the path part is mapped. */
function rewriteMentions(text, where) {
  return text.replace(/(^|[^\w/.\\@-])((?:\.{1,2}\/)*)((?:dist\/)?src\/[\w.*/-]*)/gm, (all, before, up, token) => {
    // a sentence's full stop is kept out of the path (a trailing / stays: a folder's)
    const [, path, after] = /^(.*?)(\.*)$/.exec(token);
    const m = rewritePath(path, where);
    return m === undefined ? all : `${before}${up}${m}${after}`;
  });
}

/** The same paths as string segments: join(ROOT, 'dist', 'src', 'cli', 'main.js'). */
function rewriteSegments(text, where) {
  return text.replace(/(['"])((?:dist\1\s*,\s*\1)?src(?:\1\s*,\s*\1[\w.-]+)+)\1/g, (all, q, inner) => {
    const sep = new RegExp(`${q}\\s*,\\s*${q}`);
    const segments = inner.split(sep);
    const joiner = inner.match(sep)[0];
    const m = rewritePath(segments.join('/'), where);
    return m === undefined ? all : `${q}${m.split('/').join(joiner)}${q}`;
  });
}

const unescapeRe = (s) => s.replace(/\\\//g, '/').replace(/\\\./g, '.');
const escapeRe = (s) => s.replace(/\./g, '\\.').replace(/\//g, '\\/');

/** The paths escaped in regular expressions: dist\/src\/prompt\/templates\.js, dist\/src\/(a\/x|b\/(y|z)). */
function rewriteEscaped(text, where) {
  let out = '';
  let i = 0;
  const re = /(^|[^\w\\])((?:dist\\\/)?src\\\/)/g;
  for (let m; (m = re.exec(text));) {
    const start = m.index + m[1].length;
    let end = start + m[2].length;
    const prefix = unescapeRe(m[2]); // "src/" or "dist/src/"
    if (text[end] === '(') {
      // an alternation: each alternative begins with a name under src/
      let depth = 0;
      let close = end;
      for (; close < text.length; close++) {
        if (text[close] === '\\') {
          close++;
          continue;
        }
        if (text[close] === '(') depth++;
        if (text[close] === ')' && --depth === 0) break;
      }
      const body = text.slice(end + 1, close);
      const alts = [];
      let level = 0;
      let from = 0;
      for (let k = 0; k < body.length; k++) {
        if (body[k] === '\\') {
          k++;
          continue;
        }
        if (body[k] === '(') level++;
        else if (body[k] === ')') level--;
        else if (body[k] === '|' && level === 0) {
          alts.push(body.slice(from, k));
          from = k + 1;
        }
      }
      alts.push(body.slice(from));
      const mapped = alts.map((alt) => {
        const head = /^[\w-]+(?:\\\.[\w-]+)*/.exec(alt);
        if (checking) {
          const name = head ? unescapeRe(head[0]) : '';
          const m2 = head ? mapRepo(`${prefix}${name}`) : null;
          return m2 === null || m2 === `${prefix}${name}` ? alt : `${alt} (was ${prefix}${name})`;
        }
        if (!head) {
          problems.push(`${where}: cannot read the alternative "${alt}" of a regular expression naming ${prefix}(...); fix it by hand`);
          return alt;
        }
        const name = unescapeRe(head[0]);
        const m2 = mapRepo(`${prefix}${name}`);
        if (m2 === null) {
          problems.push(`${where}: ${prefix}${name} (in a regular expression) is in no folder of the map; fix it by hand`);
          return alt;
        }
        return escapeRe(m2.slice(prefix.length)) + alt.slice(head[0].length);
      });
      out += text.slice(i, end) + '(' + mapped.join('|') + ')';
      i = close + 1;
      re.lastIndex = i;
      continue;
    }
    const seg = /^(?:[\w-]+(?:\\\.[\w-]+)*(?:\\\/)?)+/.exec(text.slice(end));
    if (!seg) continue;
    end += seg[0].length;
    const path = unescapeRe(text.slice(start, end));
    const m2 = rewritePath(path, where);
    if (m2 !== undefined) {
      out += text.slice(i, start) + escapeRe(m2);
      i = end;
    }
    re.lastIndex = end;
  }
  return out + text.slice(i);
}

/** Relative module specifiers of a file of src/ (it moves, and so may what it names). */
function rewriteSpecifiers(text, file) {
  const to = moves.get(file) ?? file;
  const fix = (spec) => {
    if (spec.includes('${')) return spec; // a template (code the file writes), not its own import
    const target = posix.normalize(posix.join(posix.dirname(file), spec));
    if (!exists(target)) {
      problems.push(`${file}: ${spec} names nothing (${target})`);
      return spec;
    }
    let mapped = mapRepo(target);
    if (mapped === null) {
      problems.push(`${file}: ${spec} names ${target}, which the map does not place`);
      return spec;
    }
    if (spec.endsWith('/') && !mapped.endsWith('/')) mapped += '/';
    let rel = posix.relative(posix.dirname(to), mapped.replace(/\/$/, '')) + (mapped.endsWith('/') ? '/' : '');
    if (!rel.startsWith('.')) rel = `./${rel}`;
    return rel;
  };
  const contexts = [
    /(\bfrom\s*)(['"])(\.{1,2}\/[^'"\n]*)\2/g,
    /(\bimport\s*\(\s*)(['"])(\.{1,2}\/[^'"\n]*)\2/g,
    /(^\s*import\s+)(['"])(\.{1,2}\/[^'"\n]*)\2/gm,
    /(\brequire\s*\(\s*)(['"])(\.{1,2}\/[^'"\n]*)\2/g,
    /(\bvi\.(?:mock|doMock|unmock|doUnmock|importActual|importMock)\s*\(\s*)(['"])(\.{1,2}\/[^'"\n]*)\2/g,
    /(\bnew\s+URL\s*\(\s*)(['"])(\.{1,2}\/[^'"\n]*)\2(?=\s*,\s*import\.meta\.url)/g,
  ];
  for (const re of contexts) text = text.replace(re, (all, lead, q, spec) => `${lead}${q}${fix(spec)}${q}`);
  return text;
}

/** A file's new text: its specifiers (files of src/), then every mention of a path under src/. */
function rewrite(text, file) {
  if (file.startsWith('src/') && CODE.test(file)) text = rewriteSpecifiers(text, file);
  if (CODE.test(file)) {
    text = rewriteSegments(text, file);
    text = rewriteEscaped(text, file);
  }
  return rewriteMentions(text, file);
}

const SKIP = new Set(['package-lock.json', 'scripts/relayer.mjs']);
const edits = new Map();
for (const file of tracked) {
  if (SKIP.has(file) || !TEXT.test(file)) continue;
  let text;
  try {
    if (statSync(file).size > 4 * 1024 * 1024) continue;
    text = readFileSync(file, 'utf8');
  } catch {
    continue;
  }
  if (text.includes('\u0000')) continue;
  const next = rewrite(text, file);
  if (next !== text) edits.set(file, next);
}
if (problems.length) fail('cannot rewrite every reference (nothing was changed):', problems);

// --- report or apply -------------------------------------------------------------------------

if (DRY) {
  print('The map (from eslint.layers.js):');
  for (const [from, to] of map.files) print(`  ${from} -> ${to}`);
  for (const [from, to] of [...map.folders].sort()) print(`  ${from}/ -> ${to}/`);
  print(`${[...moves].filter(([a, b]) => a !== b).length} files move; ${edits.size} files are rewritten:`);
  for (const f of edits.keys()) print(`  ${f}`);
  if (left.size) print(`Left as they are (under src/, but nothing there and no folder of the map):\n  ${[...left].join('\n  ')}`);
  process.exit(0);
}

const moved = [...moves].filter(([a, b]) => a !== b);
for (const [from, to] of moved) {
  mkdirSync(posix.dirname(to), { recursive: true });
  git('mv', from, to);
}
for (const [file, text] of edits) writeFileSync(moves.get(file) ?? file, text);
// longer or shorter import lines: the rewritten files are formatted again (as npm run lint checks)
const written = [...edits.keys()].map((f) => moves.get(f) ?? f);
if (existsSync('node_modules/.bin/prettier'))
  for (let k = 0; k < written.length; k += 100)
    execFileSync('node_modules/.bin/prettier', ['--write', '--log-level', 'warn', '--ignore-unknown', ...written.slice(k, k + 100)], {
      stdio: 'inherit',
    });
else print('prettier is not installed (npm ci): run `npx prettier --write .` before committing');
// an import prettier spread over lines escapes the `eslint-disable-next-line` above it (the
// linter reports its last line): such a comment becomes a disable/enable pair around the import
for (const file of written.filter((f) => CODE.test(f))) {
  const text = readFileSync(file, 'utf8');
  const next = text.replace(
    /^([ \t]*)\/\/ eslint-disable-next-line ([\w/@-]+(?:, [\w/@-]+)*)( -- [^\n]*)?\n(\1(?:import|export)\b[^\n]*\{\n(?:[^\n]*\n)*?\1\} from [^\n]*\n)/gm,
    (all, indent, rules, reason = '', statement) =>
      `${indent}/* eslint-disable ${rules}${reason.replace(/\*\//g, '* /')} */\n${statement}${indent}/* eslint-enable ${rules} */\n`,
  );
  if (next !== text) writeFileSync(file, next);
}

// generated files (ignored) of the old folders, empty old folders, and the stale build
const strays = [];
const sweep = (d) => {
  for (const e of readdirSync(d, { withFileTypes: true })) {
    const p = `${d}/${e.name}`;
    if (e.isDirectory() && e.name === '__pycache__') rmSync(p, { recursive: true, force: true });
    else if (e.isDirectory()) sweep(p);
    else if (/\.generated\./.test(e.name)) rmSync(p, { force: true });
    else strays.push(p);
  }
  if (readdirSync(d).length === 0) rmdirSync(d);
};
const oldDirs = [...new Set(moved.map(([from]) => from.split('/').slice(0, 2).join('/')))].filter((d) => d !== 'src' && !/\.\w+$/.test(d));
for (const dir of oldDirs.sort()) if (existsSync(dir) && statSync(dir).isDirectory()) sweep(dir);
rmSync('dist', { recursive: true, force: true });

// --- check: nothing the map would still change ------------------------------------------------

const after = git('ls-files', '-z').split('\0').filter(Boolean);
const stale = [];
checking = true;
for (const file of after) {
  if (SKIP.has(file) || !TEXT.test(file) || !existsSync(file)) continue;
  const text = readFileSync(file, 'utf8');
  if (text.includes('\u0000')) continue;
  const check = rewriteMentions(CODE.test(file) ? rewriteEscaped(rewriteSegments(text, file), file) : text, file);
  if (check !== text) {
    const a = text.split('\n');
    const b = check.split('\n');
    a.forEach((line, i) => line !== b[i] && stale.push(`${file}:${i + 1}: ${line.trim().slice(0, 160)}`));
  }
}
print(`relayer: ${moved.length} files moved, ${edits.size} files rewritten.`);
if (left.size) print(`Left as they are (under src/, but nothing there and no folder of the map):\n  ${[...left].join('\n  ')}`);
if (strays.length) print(`Files left in the old folders (not tracked, not generated):\n  ${strays.join('\n  ')}`);
if (stale.length) fail('references to the old folders remain after the rewrite; fix them by hand:', stale);
print(
  'Next: node scripts/gen-schema.mjs && npm run lint && npm run build && npm test, then commit (see the header for .git-blame-ignore-revs).',
);
