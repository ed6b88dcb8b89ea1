// The debate config of Agents 1.0 under a judge that always says "stay" reproduces the
// walk-through of docs/agents-v1-semantics.md (§7): 34 messages, 29 judge calls, 11 speaker choices and an
// environment summary after every 5 messages.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadSopFile } from '../src/api/loader/checked-load.js';
import { Run } from '../src/api/engine/run-with-features.js';
import type { RunEvent } from '../src/core/runtime/events.js';
import { ScriptedLlm } from './helpers/scripted-llm.js';
import { CONFORMANCE } from './helpers/v1.js';

const DEBATE = join(CONFORMANCE, 'Multi_Agent/debate/config.json');
const AF = 'Affirmative_First',
  AS = 'Affirmative_Second',
  AT = 'Affirmative_Third';
const NF = 'Negative_First',
  NS = 'Negative_Second',
  NT = 'Negative_Third',
  J = 'Debate_Judge';

describe('the debate config, judge always "stay" (reference §7 walk-through)', () => {
  it('runs 34 messages through five states with 29 judge calls, 11 speaker choices and summaries every 5 messages', async () => {
    const { sop } = loadSopFile(DEBATE); // an Agents 1.0 config, imported in memory
    const routed = [AS, NT, J, AF, NS, AT, NF, AS, J, NT, AF];
    const llm = new ScriptedLlm({
      judge: [],
      speaker: routed.map((role) => () => `<end>${role}</end>`),
      fallback: (r) =>
        r.meta.purpose === 'judge'
          ? '0'
          : r.meta.purpose === 'summary'
            ? `summary ${r.meta.turn}`
            : `${r.meta.agent} argues (turn ${r.meta.turn})`,
    });
    const events: RunEvent[] = [];
    const res = await new Run({ sop, file: DEBATE, llm, maxTurns: 100, listeners: [(e) => events.push(e)] }).run();

    expect(res.status).toBe('finished');
    expect(res.finalState).toBe('end_state');
    expect(res.messages).toHaveLength(34);
    const inState = (s: string) => res.messages.filter((m) => m.state === s);
    expect(inState('Affirmative_Task_Allocation_state').map((m) => m.role)).toEqual([AF, AS, AT, AF, AS, AT, AF]);
    expect(inState('Negative_Task_Allocation_state').map((m) => m.role)).toEqual([NF, NS, NT, NF, NS, NT, NF]);
    expect(inState('Debate_Order_state').map((m) => m.role)).toEqual([J, AF, NF, AS, NS, AT, NT]);
    const random = inState('Debate_Random_state');
    expect(random.map((m) => m.role)).toEqual([J, ...routed]);
    const judgeState = inState('Judge_state');
    expect(judgeState.map((m) => `${m.sender}:${m.kind}`)).toEqual(['J.K.Rowling:speech']); // an LLM turn: begin_role is not explicit

    // Begin turns say their begin_query verbatim; the judge's final turn is an LLM call.
    expect(res.messages[0]!.content).toBe('How can we support our viewpoint?');
    expect(res.messages[7]!.content).toBe('How can we support our viewpoint?!');
    expect(res.messages[14]!.kind).toBe('begin');
    expect(random[0]!.kind).toBe('begin');

    const judges = llm.of('judge');
    expect(judges).toHaveLength(29);
    const perState = (s: string) => judges.filter((c) => c.meta.state === s).length;
    expect([
      perState('Affirmative_Task_Allocation_state'),
      perState('Negative_Task_Allocation_state'),
      perState('Debate_Order_state'),
      perState('Debate_Random_state'),
    ]).toEqual([6, 6, 6, 11]);
    expect(llm.of('speaker')).toHaveLength(11);
    expect(llm.of('agent')).toHaveLength(30); // 34 messages less 4 begin queries
    const summaries = events.filter((e): e is Extract<RunEvent, { type: 'summary' }> => e.type === 'summary');
    expect(summaries.map((s) => s.after_messages)).toEqual([5, 10, 15, 20, 25, 30]);
    // every message up to the last summary is in a summary request (§3.10: the window is not
    // scoped to a competitive state), the ones at state boundaries (6 to 9) too
    const asked = llm.of('summary').map((c) => c.messages.map((m) => m.content).join('\n'));
    expect(asked).toHaveLength(6);
    const missing = res.messages.slice(0, 30).flatMap((m, i) => (asked.some((text) => text.includes(m.content)) ? [] : [i + 1]));
    expect(missing).toEqual([]);
    // and each is in the request of the refresh that follows it, not only found again as relevant
    res.messages.slice(0, 30).forEach((m, i) => expect(asked[Math.floor(i / 5)], `message ${i + 1}`).toContain(m.content));
  }, 30_000);
});
