// world_model.json: checked reading and atomic writing. The shape is checked against
// schemas/worldmodel.schema.json (an ajv validator generated at build time by
// scripts/gen-schema.mjs); ids, where each statement belongs and acceptance are checked here.
import type { FromSchema } from 'json-schema-to-ts';
import { writeFileAtomic } from '../../../shared/util/atomic-write.js';
import { checkSchema, type Known, type SameShape } from '../../../shared/util/schema-error.js';
import { WorldModel, type WorldModelData } from './model.js';
import { WorldModelError, type Prediction, type Statement, type Triple } from './statement.js';
import { worldModelSchema } from './schema.generated.js';
import validateWorldModel from './worldmodel-validator.generated.js';
import { readJsonFile } from '../../../shared/util/json-syntax.js';

// The schema and the interfaces of statement.ts describe the same records: this fails to compile if they drift.
type Doc = FromSchema<typeof worldModelSchema>;
type DocStatement = Known<Doc['statements'][number]>;
type DocPrediction = Known<DocStatement['predictions'][number]>;
const sameStatement: SameShape<Omit<DocStatement, 'triples' | 'predictions'>, Omit<Statement, 'triples' | 'predictions'>> = true;
const sameTriple: SameShape<Known<DocStatement['triples'][number]>, Triple> = true;
const samePrediction: SameShape<Omit<DocPrediction, 'test'>, Omit<Prediction, 'test'>> = true;
const sameTest: SameShape<Known<NonNullable<DocPrediction['test']>>, NonNullable<Prediction['test']>> = true;
void [sameStatement, sameTriple, samePrediction, sameTest];

export function parseWorldModel(doc: unknown, source = 'world model'): WorldModel {
  const fail = (pointer: string, msg: string): never => {
    throw new WorldModelError(`${source}: ${pointer}: ${msg}`);
  };
  checkSchema(validateWorldModel, worldModelSchema, doc, fail);
  const seen = new Set<number>();
  const check = (s: Doc['statements'][number], p: string, live: boolean): Statement => {
    if (seen.has(s.id)) fail(`${p}/id`, `statement id ${s.id} is used twice`);
    if (s.id >= doc.next_statement_id) fail(`${p}/id`, `must be below next_statement_id (${doc.next_statement_id})`);
    seen.add(s.id);
    if (live && s.status === 'rejected') fail(`${p}/status`, 'a rejected statement belongs in /rejected');
    if (!live && s.status !== 'rejected') fail(`${p}/status`, 'must be rejected');
    if (s.status === 'accepted' && s.predictions.some((pr) => pr.test?.outcome !== 'confirmed')) {
      fail(`${p}/predictions`, 'an accepted statement must have every prediction confirmed');
    }
    return s;
  };
  const statements = doc.statements.map((s, i) => check(s, `/statements/${i}`, true));
  const rejected = doc.rejected.map((s, i) => check(s, `/rejected/${i}`, false));
  const data: WorldModelData = { version: 1, next_statement_id: doc.next_statement_id, statements, rejected };
  return WorldModel.fromData(data);
}

/** Reads a world model file; a missing file is an empty model. */
export function loadWorldModel(file: string): WorldModel {
  const doc = readJsonFile(file, (message) => new WorldModelError(message));
  return doc === undefined ? new WorldModel() : parseWorldModel(doc, file);
}

export function saveWorldModel(file: string, model: WorldModel): void {
  writeFileAtomic(file, JSON.stringify(model.toJSON(), null, 2) + '\n');
}
