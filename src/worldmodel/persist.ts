// world_model.json: checked reading and atomic writing.
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { WorldModel, type WorldModelData } from './model.js';
import { isTestMethod, isTestOutcome, TEST_METHODS, TEST_OUTCOMES, WorldModelError, type Statement } from './statement.js';

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isId = (v: unknown): v is number => Number.isInteger(v) && (v as number) >= 1;
const STATUSES = ['hypothesis', 'accepted', 'rejected'];

export function parseWorldModel(doc: unknown, source = 'world model'): WorldModel {
  const fail = (pointer: string, msg: string): never => { throw new WorldModelError(`${source}: ${pointer}: ${msg}`); };
  if (!isObj(doc)) fail('', 'must be an object with statements and rejected');
  const d = doc as Record<string, unknown>;
  if (d.version !== 1) fail('/version', 'must be 1');
  if (!isId(d.next_statement_id)) fail('/next_statement_id', 'must be a positive integer');
  const seen = new Set<number>();
  const statement = (raw: unknown, p: string, live: boolean): Statement => {
    if (!isObj(raw)) fail(p, 'must be an object');
    const s = raw as Record<string, unknown>;
    if (!isId(s.id)) fail(`${p}/id`, 'must be a positive integer');
    if (seen.has(s.id as number)) fail(`${p}/id`, `statement id ${s.id} is used twice`);
    if ((s.id as number) >= (d.next_statement_id as number)) fail(`${p}/id`, `must be below next_statement_id (${d.next_statement_id})`);
    seen.add(s.id as number);
    if (typeof s.text !== 'string' || !s.text) fail(`${p}/text`, 'must be a non-empty string');
    if (!STATUSES.includes(s.status as string)) fail(`${p}/status`, `must be one of ${STATUSES.join(', ')}`);
    if (live && s.status === 'rejected') fail(`${p}/status`, 'a rejected statement belongs in /rejected');
    if (!live && s.status !== 'rejected') fail(`${p}/status`, 'must be rejected');
    if (!Array.isArray(s.triples)) fail(`${p}/triples`, 'must be a list');
    (s.triples as unknown[]).forEach((t, i) => {
      if (!isObj(t) || ['subject', 'predicate', 'object'].some((k) => typeof t[k] !== 'string')) {
        fail(`${p}/triples/${i}`, 'must be {subject, predicate, object} strings');
      }
    });
    if (!Array.isArray(s.predictions)) fail(`${p}/predictions`, 'must be a list');
    (s.predictions as unknown[]).forEach((pr, i) => {
      const pp = `${p}/predictions/${i}`;
      if (!isObj(pr) || !isId(pr.id) || typeof pr.text !== 'string') fail(pp, 'must be {id, text, test?}');
      const test = (pr as Record<string, unknown>).test;
      if (test !== undefined) {
        if (!isObj(test)) fail(`${pp}/test`, 'must be {method, outcome, evidence}');
        const t = test as Record<string, unknown>;
        if (!isTestMethod(t.method)) fail(`${pp}/test/method`, `must be one of ${TEST_METHODS.join(', ')}`);
        if (!isTestOutcome(t.outcome)) fail(`${pp}/test/outcome`, `must be one of ${TEST_OUTCOMES.join(', ')}`);
        if (typeof t.evidence !== 'string') fail(`${pp}/test/evidence`, 'must be a string');
      }
    });
    if (s.status === 'accepted' && (s.predictions as Array<{ test?: { outcome: string } }>).some((pr) => pr.test?.outcome !== 'confirmed')) {
      fail(`${p}/predictions`, 'an accepted statement must have every prediction confirmed');
    }
    if (s.task !== undefined && !isId(s.task)) fail(`${p}/task`, 'must be a task id');
    if (s.reason !== undefined && typeof s.reason !== 'string') fail(`${p}/reason`, 'must be a string');
    return s as unknown as Statement;
  };
  if (!Array.isArray(d.statements)) fail('/statements', 'must be a list');
  if (!Array.isArray(d.rejected)) fail('/rejected', 'must be a list');
  const statements = (d.statements as unknown[]).map((s, i) => statement(s, `/statements/${i}`, true));
  const rejected = (d.rejected as unknown[]).map((s, i) => statement(s, `/rejected/${i}`, false));
  const data: WorldModelData = { version: 1, next_statement_id: d.next_statement_id as number, statements, rejected };
  return WorldModel.fromData(data);
}

/** Reads a world model file; a missing file is an empty model. */
export function loadWorldModel(file: string): WorldModel {
  if (!existsSync(file)) return new WorldModel();
  let doc: unknown;
  try {
    doc = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new WorldModelError(`${file}: not valid JSON (${(err as Error).message})`);
  }
  return parseWorldModel(doc, file);
}

export function saveWorldModel(file: string, model: WorldModel): void {
  const tmp = `${file}.tmp`;
  writeFileSync(tmp, JSON.stringify(model.toJSON(), null, 2) + '\n');
  renameSync(tmp, file);
}
