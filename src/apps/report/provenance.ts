// DIR/provenance.json of every run and sweep folder (docs/validity.md#provenance): the SHA-256
// of the SOP file, of every data file it names (src/format/sop/named-files.ts, rendered with
// each run's inputs), of the model file (a GGUF) or cassette its LLM came from, the version and
// git commit of sop, the seeds, and a Merkle root over the runs' outcomes. `sop report --verify
// DIR` recomputes each and names what changed.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { readInputFile } from '../../shared/io/read-input-file.js';
import { writeFileAtomic } from '../../shared/util/atomic-write.js';
import { canonicalJson } from '../../shared/util/job-signature.js';
import { packageRoot } from '../../shared/util/package-root.js';
import { namedFiles } from '../../format/sop/named-files.js';
import type { RunRecord } from '../../features/journal/record.js';
import { JOURNAL_FILE } from '../../features/journal/writer.js';
import { finalMetrics } from '../sweep/final-metrics.js';
import { runRecord, ReportError } from './runs.js';

export const PROVENANCE_FILE = 'provenance.json';
const FORMAT = 'sop-provenance/1';

export interface FileHash {
  /** What the file is ("SOP file", "population file", "cassette", "model file"). */
  what: string;
  /** Where the SOP names it (a JSON pointer), when it does. */
  pointer?: string;
  path: string;
  /** null: the file could not be read. */
  sha256: string | null;
}

export interface RunOutcome {
  key: string;
  seed: number;
  arm?: string;
  /** SHA-256 of the run's outcome: status, turns, final state, final metrics and its messages. */
  outcome: string;
}

export interface Provenance {
  format: typeof FORMAT;
  kind: 'run' | 'sweep';
  sop: FileHash;
  files: FileHash[];
  llm: { spec: string; file?: FileHash };
  sop_version: string;
  git_commit: string | null;
  seeds: number[];
  runs: RunOutcome[];
  merkle_root: string;
}

const sha256 = (data: string | Buffer): string => createHash('sha256').update(data).digest('hex');

const hashCache = new Map<string, { mtimeMs: number; size: number; sha256: string }>();

/** SHA-256 of a file (null when it cannot be read), cached by path, size and modification time. */
export function fileSha256(path: string): string | null {
  try {
    const st = statSync(path);
    if (!st.isFile()) return null;
    const known = hashCache.get(path);
    if (known && known.mtimeMs === st.mtimeMs && known.size === st.size) return known.sha256;
    const h = sha256(readFileSync(path));
    hashCache.set(path, { mtimeMs: st.mtimeMs, size: st.size, sha256: h });
    return h;
  } catch {
    return null;
  }
}

const hashOf = (what: string, path: string, pointer?: string): FileHash => ({
  what,
  ...(pointer ? { pointer } : {}),
  path,
  sha256: fileSha256(path),
});

/** The Merkle root of the outcomes (leaves: SHA-256 of key and outcome, in key order; an odd node goes up as it is). */
export function merkleRoot(runs: readonly RunOutcome[]): string {
  let level = [...runs].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)).map((r) => sha256(`leaf\n${r.key}\n${r.outcome}`));
  if (level.length === 0) return sha256('empty');
  while (level.length > 1) {
    const next: string[] = [];
    for (let i = 0; i < level.length; i += 2) next.push(i + 1 < level.length ? sha256(`node\n${level[i]}\n${level[i + 1]}`) : level[i]!);
    level = next;
  }
  return level[0]!;
}

/** The outcome of a run from its journal: what a repeat of it must reproduce. */
export function runOutcome(record: RunRecord): string {
  const messages = createHash('sha256');
  for (const e of record.effective)
    if (e.type === 'message') messages.update(canonicalJson([e.message.state, e.message.role, e.message.sender, e.message.content]) + '\n');
  return sha256(
    canonicalJson({
      status: record.status,
      turns: record.turns,
      final_state: record.finished?.final_state ?? null,
      result: record.finished?.result ?? null,
      metrics: finalMetrics(record.effective),
      messages: messages.digest('hex'),
    }),
  );
}

let version: { sop_version: string; git_commit: string | null } | undefined;

/** sop's version (package.json) and the git commit of its checkout, when it runs from one. */
export function sopVersion(): { sop_version: string; git_commit: string | null } {
  if (version) return version;
  const root = packageRoot();
  let v = 'unknown';
  try {
    v = String((JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version?: unknown }).version ?? 'unknown');
  } catch {
    // left unknown
  }
  version = { sop_version: v, git_commit: gitCommit(root) };
  return version;
}

/** The commit HEAD names in the checkout at `root` (a worktree's .git file followed), read from git's files. */
function gitCommit(root: string): string | null {
  try {
    let gitDir = join(root, '.git');
    if (statSync(gitDir).isFile()) {
      const m = /^gitdir:\s*(.+)$/m.exec(readFileSync(gitDir, 'utf8'));
      if (!m) return null;
      gitDir = resolve(root, m[1]!.trim());
    }
    const head = readFileSync(join(gitDir, 'HEAD'), 'utf8').trim();
    if (/^[0-9a-f]{40}$/.test(head)) return head;
    const ref = /^ref:\s*(\S+)$/.exec(head)?.[1];
    if (!ref) return null;
    const common = existsSync(join(gitDir, 'commondir')) ? resolve(gitDir, readFileSync(join(gitDir, 'commondir'), 'utf8').trim()) : gitDir;
    for (const dir of [gitDir, common]) {
      const f = join(dir, ref);
      if (existsSync(f)) return readFileSync(f, 'utf8').trim();
    }
    const packed = join(common, 'packed-refs');
    if (existsSync(packed))
      for (const line of readFileSync(packed, 'utf8').split('\n')) {
        const [sha, name] = line.split(' ');
        if (name === ref && sha && /^[0-9a-f]{40}$/.test(sha)) return sha;
      }
  } catch {
    // not a checkout
  }
  return null;
}

/** The LLM of a run and the file it came from: a cassette (replay:) or a model file (local:, or the SOP's local model). */
function llmOf(record: RunRecord, sopFile: string): { spec: string; file?: FileHash } {
  const launch = record.started.launch ?? {};
  const spec = typeof launch.llm === 'string' ? launch.llm : record.started.llm;
  const doc = record.started.document as { llm?: { provider?: string; model?: string } } | undefined;
  for (const [kind, what] of [
    ['replay:', 'cassette'],
    ['local:', 'model file'],
  ] as const)
    if (spec.startsWith(kind) && !spec.startsWith(`${kind}hf:`)) return { spec, file: hashOf(what, resolve(spec.slice(kind.length))) };
  if (typeof launch.record === 'string') return { spec, file: hashOf('cassette', resolve(launch.record)) };
  if ((spec === 'local' || doc?.llm?.provider === 'local') && typeof doc?.llm?.model === 'string' && /\.gguf$/i.test(doc.llm.model)) {
    const m = doc.llm.model;
    return { spec, file: hashOf('model file', isAbsolute(m) ? m : resolve(dirname(sopFile), m)) };
  }
  return { spec };
}

/** The data files a run's SOP names, rendered with its inputs, hashed. */
function dataFiles(record: RunRecord, sopFile: string): FileHash[] {
  return namedFiles(record.started.document, dirname(sopFile), record.started.inputs).map((f) => hashOf(f.what, f.resolved, f.pointer));
}

/** The runs of a provenance: each folder's journal and its key, seed and arm. */
export interface ProvenanceRun {
  key: string;
  seed: number;
  arm?: string;
  dir: string;
}

/** Computes the provenance of a run or a sweep from its runs' journals. */
export function computeProvenance(kind: 'run' | 'sweep', runs: readonly ProvenanceRun[], sopFileGiven?: string): Provenance {
  if (runs.length === 0 && sopFileGiven === undefined) throw new ReportError('no run to take the provenance of');
  const files = new Map<string, FileHash>();
  let llm: Provenance['llm'] = { spec: 'none' };
  const outcomes: RunOutcome[] = [];
  let sopFile = sopFileGiven;
  for (const run of runs) {
    let record: RunRecord;
    try {
      record = runRecord(run.dir);
    } catch {
      outcomes.push({ key: run.key, seed: run.seed, ...(run.arm !== undefined ? { arm: run.arm } : {}), outcome: 'unreadable' });
      continue;
    }
    sopFile ??= resolve(record.started.file);
    for (const f of dataFiles(record, sopFile)) files.set(`${f.pointer ?? ''}\u0000${f.path}`, f);
    llm = llmOf(record, sopFile);
    outcomes.push({ key: run.key, seed: run.seed, ...(run.arm !== undefined ? { arm: run.arm } : {}), outcome: runOutcome(record) });
  }
  const sop = hashOf('SOP file', sopFile ?? '');
  return {
    format: FORMAT,
    kind,
    sop,
    files: [...files.values()],
    llm,
    ...sopVersion(),
    seeds: [...new Set(runs.map((r) => r.seed))].sort((a, b) => a - b),
    runs: outcomes,
    merkle_root: merkleRoot(outcomes),
  };
}

/** Writes DIR/provenance.json. */
export function writeProvenance(dir: string, p: Provenance): string {
  const file = join(dir, PROVENANCE_FILE);
  writeFileAtomic(file, JSON.stringify(p, null, 2) + '\n');
  return file;
}

/** DIR/provenance.json as written (a missing or malformed file is a one-line error). */
export function readProvenance(dir: string): Provenance {
  const file = join(dir, PROVENANCE_FILE);
  if (!existsSync(file)) throw new ReportError(`${file}: no provenance here; it is written at the end of sop run and sop sweep`);
  let p: unknown;
  try {
    p = JSON.parse(readInputFile(file, { maxBytes: 256 * 1024 * 1024, what: 'a provenance file' }));
  } catch (err) {
    throw new ReportError(`${file}: cannot be read as JSON (${(err as Error).message.split('\n')[0]})`);
  }
  const o = p as Partial<Provenance>;
  if (
    o?.format !== FORMAT ||
    !Array.isArray(o.runs) ||
    !Array.isArray(o.files) ||
    typeof o.merkle_root !== 'string' ||
    typeof o.sop !== 'object'
  )
    throw new ReportError(`${file}: not a provenance file of this sop (format ${FORMAT})`);
  return o as Provenance;
}

/** What --verify found: each change in words, and what was checked. */
export interface Verification {
  changes: string[];
  notes: string[];
  checked: number;
}

const short = (h: string | null) => (h === null ? 'unreadable' : h.slice(0, 12));

/** Recomputes the provenance of DIR's runs and compares it with DIR/provenance.json. */
export function verifyProvenance(saved: Provenance, now: Provenance): Verification {
  const changes: string[] = [];
  const notes: string[] = [];
  let checked = 0;
  const compare = (before: FileHash, after: FileHash | undefined) => {
    checked++;
    const where = `${before.what}${before.pointer ? ` (${before.pointer})` : ''} ${before.path}`;
    if (after === undefined) changes.push(`${where}: no longer named by the runs`);
    else if (before.sha256 !== after.sha256)
      changes.push(
        `${where}: ${after.sha256 === null ? 'missing or unreadable now' : 'changed'} (sha256 ${short(before.sha256)} -> ${short(after.sha256)})`,
      );
  };
  compare(saved.sop, { ...saved.sop, sha256: fileSha256(saved.sop.path) });
  for (const f of saved.files) compare(f, { ...f, sha256: fileSha256(f.path) });
  if (saved.llm.file) compare(saved.llm.file, { ...saved.llm.file, sha256: fileSha256(saved.llm.file.path) });
  const nowRuns = new Map(now.runs.map((r) => [r.key, r]));
  for (const r of saved.runs) {
    checked++;
    const n = nowRuns.get(r.key);
    if (!n) changes.push(`run ${r.key}: missing now`);
    else if (n.outcome !== r.outcome) changes.push(`run ${r.key}: its outcome changed (its journal differs from when it was recorded)`);
  }
  const savedKeys = new Set(saved.runs.map((r) => r.key));
  for (const r of now.runs) if (!savedKeys.has(r.key)) changes.push(`run ${r.key}: not in the provenance (added since)`);
  if (now.merkle_root !== saved.merkle_root)
    changes.push(`Merkle root of the outcomes: ${short(saved.merkle_root)} -> ${short(now.merkle_root)}`);
  if (now.sop_version !== saved.sop_version || now.git_commit !== saved.git_commit)
    notes.push(
      `recorded with sop ${saved.sop_version}${saved.git_commit ? ` (${saved.git_commit.slice(0, 12)})` : ''}; this is sop ${now.sop_version}${now.git_commit ? ` (${now.git_commit.slice(0, 12)})` : ''}`,
    );
  return { changes, notes, checked };
}

/**
 * Writes RUN/provenance.json for a run folder that holds a journal (its key and seed from it,
 * unless given); a problem is returned as a warning, never thrown: a run's outcome stands without it.
 */
export function recordRunProvenance(dir: string, run?: { key: string; seed: number; arm?: string }, sopFile?: string): string | undefined {
  try {
    if (!existsSync(join(dir, JOURNAL_FILE))) return undefined;
    const r = run ?? (({ started }) => ({ key: started.run_id, seed: started.seed }))(runRecord(dir));
    writeProvenance(dir, computeProvenance('run', [{ ...r, dir }], sopFile));
    return undefined;
  } catch (err) {
    return `no ${PROVENANCE_FILE} in ${dir}: ${(err as Error).message.split('\n')[0]}`;
  }
}
