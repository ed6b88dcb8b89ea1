// Every built-in plugin that keeps state in checkpoints runs the checkpoint contract, each after a
// run that gives it something to keep; the LLM is scripted (or the mock), the rest is the real run.
import { describe, expect, it } from 'vitest';
import { MockProvider } from '../../src/index.js';
import { Run } from '../../src/extend.js';
import { validateSopDocument } from '../../src/api/loader/checked-load.js';
import { ScriptedLlm } from '../helpers/scripted-llm.js';
import { baseConfig, importConfig, tempDir, v1Reply } from '../helpers/v1.js';
import { checkpointingPlugins, pluginCheckpointContract, type CheckpointScenario } from './plugin-checkpoint.js';

/** A state whose agent must answer with a command; `done` (finish) moves it on. */
const { sop: commandSop } = validateSopDocument(
  {
    name: 'contract-actions',
    agents: { Ann: { roles: { work: 'Worker' } } },
    root: 'work',
    states: {
      work: { roles: ['Worker'], commands: { done: { executor: 'finish' } }, next_states: { '1': 'end' } },
      end: { final: true },
    },
  },
  'contract-actions.sop.json',
);

const v1 = () => importConfig(baseConfig()).sop;

const SCENARIOS: CheckpointScenario[] = [
  {
    plugin: 'actions',
    about: 'a command state finished by its finish command',
    make: () => new Run({ sop: commandSop, file: 'contract-actions.sop.json', llm: new MockProvider(), maxTurns: 5 }),
  },
  {
    plugin: 'budget',
    about: 'tokens spent against a run budget',
    make: () =>
      new Run({ sop: commandSop, file: 'contract-actions.sop.json', llm: new MockProvider(), maxTurns: 5, budget: { tokens: 1_000_000 } }),
  },
  {
    plugin: 'v1',
    about: 'an imported Agents 1.0 config: private memories of three agents',
    make: () => new Run({ sop: v1(), file: `${tempDir()}/config.json`, llm: new ScriptedLlm({ fallback: v1Reply }), maxTurns: 4, seed: 1 }),
  },
];

describe('every built-in plugin with a checkpoint has a scenario', () => {
  it('covers the checkpointing plugins of a command run and of an Agents 1.0 run', () => {
    const names = new Set(
      [...SCENARIOS.map((s) => s.make()), new Run({ sop: v1(), file: 'c.json', llm: new MockProvider() })].flatMap(checkpointingPlugins),
    );
    expect([...names].sort()).toEqual([...new Set(SCENARIOS.map((s) => s.plugin))].sort());
  });
});

for (const s of SCENARIOS) pluginCheckpointContract(s);
