// Every built-in executor (src/api/loader/executors.ts: each feature's) runs the executor contract; a new
// executor needs an example here, or this file fails.
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadSop } from '../../src/index.js';
import { BUILTIN_EXECUTORS } from '../../src/api/loader/executors.js';
import { executorContract, type ExecutorExample } from './executor.js';

const SOPS = resolve('sops');

const EXAMPLES: Record<string, ExecutorExample> = {
  code: { settings: { language: 'python' } },
  memory: { settings: { op: 'append' } },
  library: { settings: { op: 'test' } },
  human: { settings: { kind: 'ask' } },
  sop: { settings: { file: 'extend_library.sop.json' }, env: { baseDir: SOPS, loadSop: (file) => loadSop(file) } },
  finish: { settings: {} },
  task_board: { settings: { op: 'create' } },
  world_model: { settings: { op: 'propose' } },
  knowledge: { settings: { file: 'kb.json' } },
};

describe('every built-in executor has a contract example', () => {
  it('lists the same executors as the features contribute', () => {
    expect(Object.keys(EXAMPLES).sort()).toEqual(Object.keys(BUILTIN_EXECUTORS).sort());
  });
});

for (const [name, executor] of Object.entries(BUILTIN_EXECUTORS)) executorContract(executor, EXAMPLES[name] ?? { settings: {} });
