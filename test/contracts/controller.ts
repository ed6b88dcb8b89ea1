// The contract of a controller strategy (src/core/runtime/controllers/), as a run meets it: in a state
// of three roles, every turn goes to a role of the state, played by its agent, recorded in a
// speaker_chosen event the strategy's way (a rule pick naming nobody falls back); the speaker's message follows; the same seed gives
// the same speakers. The LLM (the rule controller's) is the only part replaced.
import { describe, expect, it } from 'vitest';
import { runSop, type RunEvent } from '../../src/index.js';
import { validateSopDocument } from '../../src/api/loader/checked-load.js';
import { ScriptedLlm } from '../helpers/scripted-llm.js';

const AGENTS = { Ann: { roles: { talk: 'RA' } }, Ben: { roles: { talk: 'RB' } }, Cat: { roles: { talk: 'RC' } } };
const ROLES = ['RA', 'RB', 'RC'];
const AGENT_OF: Record<string, string> = { RA: 'Ann', RB: 'Ben', RC: 'Cat' };

/** The speaker-choice LLM names a role of the turn (and, every fourth turn, nobody). */
const speakerReply = (turn: number, candidates: string[]) =>
  turn % 4 === 3 ? 'nobody in particular' : `<end>${candidates[(turn * 2) % candidates.length]}</end>`;

async function play(type: string, seed: number) {
  const { sop } = validateSopDocument(
    {
      name: `contract-${type}`,
      agents: AGENTS,
      root: 'talk',
      states: {
        talk: { roles: ROLES, controller: { type, max_turns: 12 }, next_states: { '0': 'talk', '1': 'end' } },
        end: { final: true },
      },
    },
    'contract.sop.json',
  );
  const llm = new ScriptedLlm({
    fallback: (r) =>
      r.meta.purpose === 'speaker'
        ? speakerReply(r.meta.turn, r.meta.candidates ?? [])
        : r.meta.purpose === 'judge'
          ? '0'
          : `${r.meta.agent} at ${r.meta.turn}`,
  });
  const events: RunEvent[] = [];
  const handle = runSop(sop, { llm, seed, maxTurns: 40, listeners: [(e) => events.push(e)] });
  const result = await handle.result;
  expect(result.status).toBe('finished');
  return { events, messages: result.messages };
}

export function controllerContract(type: string, hows: readonly string[]): void {
  describe(`controller strategy "${type}"`, () => {
    it('gives every turn to a role of the state, played by its agent, and that agent speaks', async () => {
      const { events, messages } = await play(type, 5);
      const chosen = events.filter((e): e is Extract<RunEvent, { type: 'speaker_chosen' }> => e.type === 'speaker_chosen');
      expect(chosen).toHaveLength(12);
      for (const c of chosen) {
        expect(ROLES).toContain(c.role);
        expect(c.agent).toBe(AGENT_OF[c.role]);
      }
      // the visit opens with its begin role; every later pick is the strategy's, each of its ways seen
      expect(chosen[0]!.how).toBe('begin');
      expect([...new Set(chosen.slice(1).map((c) => c.how))].sort()).toEqual([...hows].sort());
      expect(messages.map((m) => `${m.sender}/${m.role}`)).toEqual(chosen.map((c) => `${c.agent}/${c.role}`));
    });

    it('picks the same speakers for the same seed', async () => {
      const a = await play(type, 9);
      const b = await play(type, 9);
      expect(b.messages.map((m) => m.role)).toEqual(a.messages.map((m) => m.role));
    });
  });
}
