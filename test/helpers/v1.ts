// Helpers for the Agents 1.0 tests: small configs in the original format, imported with the real
// importer and run with the real run loop; only the LLM (and, where named, the embedder and the
// human) is scripted.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { HumanInput, HumanQuestion } from '../../src/core/io/human.js';
import { importAndValidate } from '../../src/api/loader/import-and-validate.js';
import type { Embedder } from '../../src/core/memory/embedder.js';
import type { RunEvent } from '../../src/core/runtime/events.js';
import { Run, type RunOptions, type RunResult } from '../../src/api/engine/run-with-features.js';
import type { Sop } from '../../src/format/sop/types.js';
import { ScriptedLlm, type Script, type RecordedCall } from './scripted-llm.js';

export const REPO = resolve(import.meta.dirname, '..', '..');
/** The Agents 1.0 example configs (Apache-2.0; see test/fixtures/agents-v1/PROVENANCE.md). */
export const CONFORMANCE = resolve(REPO, 'test/fixtures/agents-v1');

/** Three agents (Ann, Ben, Cat) playing RA, RB, RC in state s1, which leads to end_state. */
export function baseConfig(): any {
  return {
    config: { API_KEY: '', MAX_CHAT_HISTORY: '100', TOP_K: '0' },
    root: 's1',
    relations: { s1: { '0': 's1', '1': 'end_state' } },
    agents: {
      Ann: { style: 'calm and exact', roles: { s1: 'RA' } },
      Ben: { style: 'loud and warm', roles: { s1: 'RB' } },
      Cat: { style: 'dry and brief', roles: { s1: 'RC' } },
    },
    states: {
      end_state: { agent_states: {} },
      s1: {
        roles: ['RA', 'RB', 'RC'],
        controller: { controller_type: 'order' },
        agent_states: { RA: { style: { role: 'Role A' } }, RB: { style: { role: 'Role B' } }, RC: { style: { role: 'Role C' } } },
      },
    },
  };
}

let dir: string | undefined;
export function tempDir(): string {
  dir ??= mkdtempSync(join(tmpdir(), 'sop-v1-'));
  return dir;
}

export function importConfig(
  doc: unknown,
  file = join(tempDir(), 'config.json'),
): { sop: Sop; warnings: { pointer: string; message: string }[] } {
  return importAndValidate(doc, { file });
}

/** Human answers from a list, in order. */
export class ListHuman implements HumanInput {
  readonly id = 'list';
  consumed = 0;
  readonly questions: HumanQuestion[] = [];
  constructor(private readonly answers: string[]) {}
  async ask(q: HumanQuestion): Promise<string> {
    this.questions.push(q);
    const a = this.answers[this.consumed];
    if (a === undefined) throw new Error('no answer left');
    this.consumed++;
    return a;
  }
}

/** Default replies: agents say `${name}-t${turn}`, judges stay, speaker choice names nobody. */
export function v1Reply(r: { meta: { purpose: string; agent?: string; turn: number } }): string {
  switch (r.meta.purpose) {
    case 'agent':
      return `${r.meta.agent}-t${r.meta.turn}`;
    case 'judge':
      return '0';
    case 'summary':
      return `summary at turn ${r.meta.turn}`;
    default:
      return '';
  }
}

export interface V1Run {
  res: RunResult;
  llm: ScriptedLlm;
  events: RunEvent[];
  sop: Sop;
  /** Senders of the recorded messages, as "Name" list. */
  senders: string[];
  calls(purpose: RecordedCall['purpose']): RecordedCall[];
}

export async function runConfig(
  doc: unknown,
  script: Script = {},
  options: Partial<RunOptions> & { answers?: string[]; file?: string } = {},
): Promise<V1Run> {
  const { sop } = importConfig(doc, options.file);
  const llm = new ScriptedLlm({ fallback: v1Reply, ...script });
  const events: RunEvent[] = [];
  const { answers, file, ...rest } = options;
  const res = await new Run({
    sop,
    file: file ?? join(tempDir(), 'config.json'),
    llm,
    maxTurns: 30,
    seed: 1,
    ...(answers ? { human: new ListHuman(answers) } : {}),
    listeners: [(e) => events.push(e)],
    ...rest,
  }).run();
  return { res, llm, events, sop, senders: res.messages.map((m) => m.sender), calls: (p) => llm.of(p) };
}

/**
 * A deterministic embedder for tests: counts of a few marker words, normalised. Texts sharing
 * markers are similar; it never learns.
 */
export function markerEmbedder(markers = ['apple', 'banana', 'cherry', 'grape', 'lemon', 'melon']): Embedder {
  return {
    id: 'test-markers',
    dimension: markers.length + 1,
    async embed(texts: string[]) {
      return texts.map((t) => {
        const v = new Float32Array(markers.length + 1);
        const lower = t.toLowerCase();
        markers.forEach((m, i) => {
          v[i] = lower.split(m).length - 1;
        });
        v[markers.length] = 0.01;
        let n = 0;
        for (const x of v) n += x * x;
        return v.map((x) => x / Math.sqrt(n));
      });
    },
  };
}
