// The observable behaviours of Agents 1.0 (docs/agents-v1-semantics.md §5), one test
// per core behaviour, named with its number, on small configs in the original format that are
// imported with `sop import`'s importer and run by the real run loop with a scripted LLM.
// The safe quirks (4, 17, 22, 29) are pinned under --compat agents-v1 at the end.
import { describe, expect, it } from 'vitest';
import { renderV1 } from '../src/features/agents-v1/compat/agents-v1/templates.js';
import type { ChatRequest } from '../src/core/llm/types.js';
import { SopError } from '../src/format/sop/diagnostics.js';
import { ScriptedLlm } from './helpers/scripted-llm.js';
import { baseConfig, importConfig, markerEmbedder, runConfig } from './helpers/v1.js';
import { join } from 'node:path';

const say = (text: string) => () => text;
/** Agent replies by turn: `${name}-t${turn}` unless listed. */
const byTurn =
  (replies: Record<number, string> = {}) =>
  (r: ChatRequest) =>
    replies[r.meta.turn] ?? `${r.meta.agent}-t${r.meta.turn}`;
/** The observation + last prompt the agent got at `turn` (the final message of its call). */
const finalMessage = (r: Awaited<ReturnType<typeof runConfig>>, turn: number) => r.calls('agent').find((c) => c.meta.turn === turn)!.last;

/** n agents A1..An playing R1..Rn in s1 (order), with s1 -> end_state. */
function manyAgents(n: number): any {
  const doc = baseConfig();
  doc.agents = {};
  doc.states.s1.roles = [];
  doc.states.s1.agent_states = {};
  for (let i = 1; i <= n; i++) {
    doc.agents[`A${i}`] = { style: `style ${i}`, roles: { s1: `R${i}` } };
    doc.states.s1.roles.push(`R${i}`);
    doc.states.s1.agent_states[`R${i}`] = { style: { role: `role ${i}` } };
  }
  return doc;
}

/** s1 (RA, RB) then s2, entered after `s1Turns` turns. */
function twoStates(s1Turns: number): any {
  const doc = baseConfig();
  doc.relations = { s1: { '0': 's1', '1': 's2' }, s2: { '0': 's2', '1': 'end_state' } };
  doc.states.s1.roles = ['RA', 'RB'];
  doc.states.s1.controller = { controller_type: 'order', max_chat_nums: s1Turns };
  delete doc.states.s1.agent_states.RC;
  doc.states.s2 = {
    roles: ['RA', 'RB', 'RC'],
    controller: { controller_type: 'order' },
    agent_states: { RA: { style: { role: 'A2' } }, RB: { style: { role: 'B2' } }, RC: { style: { role: 'C2' } } },
  };
  doc.agents.Ann.roles.s2 = 'RA';
  doc.agents.Ben.roles.s2 = 'RB';
  doc.agents.Cat.roles = { s2: 'RC' };
  return doc;
}

describe('Agents 1.0 core behaviours (§5)', () => {
  describe('start-up and begin turns', () => {
    it('1: the first turn is the root begin_role agent (or roles[0]), chosen without judge or router calls', async () => {
      const doc = baseConfig();
      doc.states.s1.begin_role = 'RB';
      doc.states.s1.controller.controller_type = 'rule';
      const r = await runConfig(doc, {}, { maxTurns: 1 });
      expect(r.senders).toEqual(['Ben']);
      expect(r.llm.calls.map((c) => c.purpose)).toEqual(['agent']);

      const plain = baseConfig();
      plain.states.s1.controller.controller_type = 'random';
      const r2 = await runConfig(plain, {}, { maxTurns: 1 });
      expect(r2.senders).toEqual(['Ann']);
      expect(r2.llm.calls.map((c) => c.purpose)).toEqual(['agent']);
    });

    it('2: an explicit begin_role with a begin_query opens with that text exactly, without calling the LLM', async () => {
      const doc = baseConfig();
      doc.states.s1.begin_role = 'RA';
      doc.states.s1.begin_query = 'Welcome, everyone: let us begin.';
      const r = await runConfig(doc, {}, { maxTurns: 1 });
      expect(r.res.messages[0]!.content).toBe('Welcome, everyone: let us begin.');
      expect(r.res.messages[0]!.sender).toBe('Ann');
      expect(r.llm.calls).toEqual([]);
    });

    it('3: without an explicit begin_role, roles[0] opens with an LLM reply, not a canned query', async () => {
      const doc = baseConfig();
      doc.states.s1.begin_query = 'never said';
      const r = await runConfig(doc, { agent: ['Ann opens'] }, { maxTurns: 1 });
      expect(r.res.messages[0]).toMatchObject({ sender: 'Ann', content: 'Ann opens' });
      expect(r.calls('agent')).toHaveLength(1);
    });

    it('5: entering a new state for the first time hands the turn to its begin_role, with no router call, even under rule or random', async () => {
      for (const type of ['rule', 'random']) {
        const doc = twoStates(1);
        doc.states.s2.controller.controller_type = type;
        doc.states.s2.begin_role = 'RC';
        doc.states.s2.begin_query = 'Cat opens s2';
        const r = await runConfig(doc, { speaker: [say('<end>RA</end>')] }, { maxTurns: 2 });
        expect(r.res.messages.map((m) => `${m.state}:${m.sender}`)).toEqual(['s1:Ann', 's2:Cat']);
        expect(r.calls('speaker')).toHaveLength(0);
      }
    });

    it('6: order with roles [RA, RB, RC] and begin_role RB speaks RB, RC, RA, RB, RC', async () => {
      const doc = baseConfig();
      doc.states.s1.begin_role = 'RB';
      doc.states.s1.begin_query = 'Ben begins';
      const r = await runConfig(doc, { judge: [], fallback: (q) => (q.meta.purpose === 'judge' ? '0' : 'ok') }, { maxTurns: 5 });
      expect(r.senders).toEqual(['Ben', 'Cat', 'Ann', 'Ben', 'Cat']);
    });

    it('7: order without begin_role speaks RA, RB, RC, RA', async () => {
      const r = await runConfig(baseConfig(), {}, { maxTurns: 4 });
      expect(r.senders).toEqual(['Ann', 'Ben', 'Cat', 'Ann']);
    });

    it('8: entering a state does not advance the rotation: its begin speaker is followed by its list successor', async () => {
      const doc = twoStates(1);
      doc.states.s2.begin_role = 'RB';
      doc.states.s2.begin_query = 'Ben opens s2';
      const r = await runConfig(doc, {}, { maxTurns: 4 });
      expect(r.res.messages.map((m) => `${m.state}:${m.sender}`)).toEqual(['s1:Ann', 's2:Ben', 's2:Cat', 's2:Ann']);
    });
  });

  describe('transit', () => {
    it('9: a state with one relation ("0") never asks the judge, whatever max_chat_nums is, and never ends by itself', async () => {
      const doc = baseConfig();
      doc.relations = { s1: { '0': 's1' } };
      doc.states.s1.controller.max_chat_nums = 2;
      const r = await runConfig(doc, {}, { maxTurns: 7 });
      expect(r.calls('judge')).toHaveLength(0);
      expect(r.res.status).toBe('max_turns');
      expect(r.res.turns).toBe(7);
    });

    it('10: with two or more relations every next step makes exactly one judge call, before the router call', async () => {
      const doc = baseConfig();
      doc.states.s1.controller.controller_type = 'rule';
      const r = await runConfig(doc, { speaker: Array(10).fill(say('<end>RB</end>')) }, { maxTurns: 4 });
      const order = r.llm.calls.map((c) => c.purpose).filter((p) => p !== 'agent');
      expect(order).toEqual(['judge', 'speaker', 'judge', 'speaker', 'judge', 'speaker']);
      expect(r.calls('judge').map((c) => c.meta.turn)).toEqual([1, 2, 3]);
    });

    it('11: max_chat_nums N with a judge that stays hosts N turns with N-1 judge calls, then moves to "1" without a judge', async () => {
      const doc = baseConfig();
      doc.states.s1.begin_role = 'RA';
      doc.states.s1.begin_query = 'go';
      doc.states.s1.controller.max_chat_nums = 3;
      const r = await runConfig(doc, { fallback: (q) => (q.meta.purpose === 'judge' ? '0' : 'ok') });
      expect(r.res.status).toBe('finished');
      expect(r.res.finalState).toBe('end_state');
      expect(r.res.turns).toBe(3);
      expect(r.calls('judge')).toHaveLength(2);
    });

    it('12: a judge reply "1" or one with <end>1</end> moves on; a padded " 1\\n" without tags stays', async () => {
      for (const reply of ['1', 'I think <end>1</end> now']) {
        const r = await runConfig(baseConfig(), { judge: [say(reply)] });
        expect(r.res.finalState).toBe('end_state');
        expect(r.res.turns).toBe(1);
      }
      const padded = await runConfig(baseConfig(), { fallback: (q) => (q.meta.purpose === 'judge' ? ' 1\n' : 'ok') }, { maxTurns: 4 });
      expect(padded.res.status).toBe('max_turns');
      expect(padded.calls('judge')).toHaveLength(3);
    });

    it('13: judge replies "maybe", "", "<end>yes</end>" and "<end>1</end><end>0</end>" keep the state', async () => {
      for (const reply of ['maybe', '', '<end>yes</end>', '<end>1</end><end>0</end>']) {
        const r = await runConfig(baseConfig(), { fallback: (q) => (q.meta.purpose === 'judge' ? reply : 'ok') }, { maxTurns: 3 });
        expect(r.res.status, reply).toBe('max_turns');
        expect(new Set(r.res.messages.map((m) => m.state))).toEqual(new Set(['s1']));
      }
    });

    it('14: with judge_extract_words "output" only <output>...</output> is honoured', async () => {
      const doc = baseConfig();
      doc.states.s1.controller.judge_extract_words = 'output';
      const moves = await runConfig(doc, { judge: [say('<output>1</output>')] });
      expect(moves.res.finalState).toBe('end_state');
      const stays = await runConfig(doc, { fallback: (q) => (q.meta.purpose === 'judge' ? '<end>1</end>' : 'ok') }, { maxTurns: 3 });
      expect(stays.res.status).toBe('max_turns');
      expect(stays.calls('judge')[0]!.system + stays.calls('judge')[0]!.last).toContain('<output>');
    });

    it('15: a transition to the finish state ends the run; the finish state never runs its components', async () => {
      const doc = baseConfig();
      doc.finish_state_name = 'done';
      doc.relations = { s1: { '0': 's1', '1': 'done' }, done: { '0': 's1' } };
      doc.states.done = { roles: ['RA'], agent_states: { RA: { task: { task: 'never' } } } };
      delete doc.states.end_state;
      doc.agents.Ann.roles.done = 'RA';
      const r = await runConfig(doc, { judge: ['0', '1'] });
      expect(r.res.status).toBe('finished');
      expect(r.res.finalState).toBe('done');
      expect(r.res.turns).toBe(2);
      expect(r.llm.calls.every((c) => c.meta.state === 's1')).toBe(true);
    });

    it('16: chat_nums counts the begin turn, user turns and LLM turns', async () => {
      const doc = baseConfig();
      doc.config.User_Names = '["Ben"]';
      doc.states.s1.begin_role = 'RA';
      doc.states.s1.begin_query = 'hello';
      doc.states.s1.controller.max_chat_nums = 3;
      const r = await runConfig(doc, {}, { answers: ['I am Ben'] });
      expect(r.res.messages.map((m) => m.kind)).toEqual(['begin', 'human', 'speech']);
      expect(r.res.finalState).toBe('end_state');
      expect(r.calls('judge')).toHaveLength(2);
    });
  });

  describe('routing', () => {
    it('19: a state with a single role never makes a router call', async () => {
      const doc = baseConfig();
      doc.states.s1.roles = ['RA'];
      doc.states.s1.controller.controller_type = 'rule';
      const r = await runConfig(doc, {}, { maxTurns: 4 });
      expect(r.senders).toEqual(['Ann', 'Ann', 'Ann', 'Ann']);
      expect(r.calls('speaker')).toHaveLength(0);
    });

    it('20: rule: "<end>RC</end>" makes RC speak; an unknown role or no tag picks a seeded random role', async () => {
      const doc = baseConfig();
      doc.states.s1.controller.controller_type = 'rule';
      const named = await runConfig(doc, { speaker: [say('<end>RC</end>')] }, { maxTurns: 2 });
      expect(named.senders).toEqual(['Ann', 'Cat']);
      for (const reply of ['<end>Nobody</end>', 'no idea']) {
        const runs = await Promise.all(
          [7, 7].map((seed) =>
            runConfig(
              doc,
              { fallback: (q) => (q.meta.purpose === 'speaker' ? reply : q.meta.purpose === 'judge' ? '0' : 'ok') },
              { maxTurns: 12, seed },
            ),
          ),
        );
        expect(runs[0]!.senders).toEqual(runs[1]!.senders);
        expect(new Set(runs[0]!.senders.slice(1)).size).toBeGreaterThan(1);
        expect(runs[0]!.events.some((e) => e.type === 'warning' && /named no known role/.test(e.message))).toBe(true);
      }
    });

    it("21: the router system prompt has call_system_prompt and one line per role; its user message has the state history and the last sender's name", async () => {
      const doc = baseConfig();
      doc.states.s1.roles = ['RA', 'RB', 'RC', 'RA'];
      doc.states.s1.controller = { controller_type: 'rule', call_system_prompt: 'Pick fairly.' };
      const r = await runConfig(doc, { agent: ['Ann says the first thing'], speaker: [say('<end>RB</end>')] }, { maxTurns: 2 });
      const call = r.calls('speaker')[0]!;
      expect(call.system).toContain('Pick fairly.');
      for (const role of ['RA', 'RB', 'RC']) expect(call.system.match(new RegExp(`<end>${role}</end>`, 'g'))).toHaveLength(1);
      const user = call.messages
        .filter((m) => m.role === 'user')
        .map((m) => m.content)
        .join('\n');
      expect(user).toContain('Ann says the first thing');
      expect(user).toContain('Ann');
    });

    it('23: random may pick the same speaker on consecutive turns', async () => {
      const doc = baseConfig();
      doc.states.s1.controller.controller_type = 'random';
      const r = await runConfig(doc, {}, { maxTurns: 30 });
      expect(r.senders.slice(1).some((s, i) => s === r.senders[i])).toBe(true);
    });
  });

  describe('agent prompt', () => {
    it('24: the system prompt begins with the environment prompt, then the components in config key order, one per line', async () => {
      const doc = baseConfig();
      doc.states.s1.environment_prompt = 'ENV-TEXT';
      doc.states.s1.agent_states.RA = {
        rule: { rule: 'RULE-TEXT' },
        style: { role: 'STYLE-ROLE' },
        task: { task: 'TASK-TEXT' },
        system: { system_prompt: 'SYS-TEXT' },
        demonstrations: { demonstrations: ['DEMO-1', 'DEMO-2'] },
        cot: { demonstrations: ['COT-1'] },
        CustomizeComponent: { template: 'CUSTOM-TEXT', keywords: [] },
      };
      const r = await runConfig(doc, {}, { maxTurns: 1 });
      const system = r.calls('agent')[0]!.system;
      expect(system.startsWith('ENV-TEXT\n')).toBe(true);
      const at = ['RULE-TEXT', 'STYLE-ROLE', 'TASK-TEXT', 'SYS-TEXT', 'DEMO-1', 'DEMO-2', 'COT-1', 'CUSTOM-TEXT'].map((t) =>
        system.indexOf(t),
      );
      expect(at.every((i) => i > 0)).toBe(true);
      expect([...at].sort((a, b) => a - b)).toEqual(at);
    });

    it("25: the style text has the role from style.role, the agent's name and its own style; style.style has no effect", async () => {
      const doc = baseConfig();
      doc.states.s1.agent_states.RA = { style: { role: 'Chief Debater', style: 'IGNORED-STYLE' } };
      const { warnings } = importConfig(doc);
      expect(warnings.some((w) => w.pointer === '/states/s1/agent_states/RA/style/style')).toBe(true);
      const r = await runConfig(doc, {}, { maxTurns: 1 });
      const system = r.calls('agent')[0]!.system;
      expect(system).toContain('Chief Debater');
      expect(system).toContain('Ann');
      expect(system).toContain('calm and exact');
      expect(system).not.toContain('IGNORED-STYLE');
    });

    it('26: output, last and tool texts go to the last prompt, which ends with "continue on behalf of <name>"', async () => {
      const doc = baseConfig();
      doc.states.s1.begin_role = 'RB';
      doc.states.s1.begin_query = 'Ben opens';
      doc.states.s1.agent_states.RC = {
        task: { task: 'TASK-C' },
        last: { last_prompt: 'LAST-TEXT' },
        output: { output: 'answer' },
        WebSearchComponent: { engine_name: 'bing', api: { bing: 'k' } },
      };
      const web = { run: async () => 'SEARCH-RESULT' };
      const r = await runConfig(doc, {}, { maxTurns: 2, agentsV1: { toolExecutors: { web_search: web } } });
      const call = r.calls('agent')[0]!;
      for (const t of ['LAST-TEXT', '<answer>', 'SEARCH-RESULT']) {
        expect(call.system).not.toContain(t);
        expect(call.last).toContain(t);
      }
      expect(call.system).toContain('TASK-C');
      const closing = call.last.indexOf('on behalf of Cat');
      expect(closing).toBeGreaterThan(call.last.indexOf('SEARCH-RESULT'));
      expect(call.last.slice(closing)).not.toMatch(/LAST-TEXT|answer>|SEARCH/);
    });

    it('27: the last prompt is appended to the final history message (the current observation), not sent on its own', async () => {
      const r = await runConfig(baseConfig(), {}, { maxTurns: 5 });
      const call = r.calls('agent').find((c) => c.meta.turn === 5)!; // Ben's second turn
      const final = call.messages[call.messages.length - 1]!;
      expect(final.role).toBe('user');
      expect(final.content).toContain('new conversation');
      expect(final.content).toContain('Cat-t3');
      expect(final.content).toMatch(/on behalf of Ben[^\n]*\.\s*$/);
      expect(call.messages.filter((m) => m.content.includes('on behalf of Ben'))).toHaveLength(1);
    });

    it("28: the history is the agent's private memory (observations as user, own messages as assistant), at most MAX_CHAT_HISTORY entries plus the system message", async () => {
      const doc = baseConfig();
      doc.config.MAX_CHAT_HISTORY = '3';
      const r = await runConfig(doc, {}, { maxTurns: 7 });
      const call = r.calls('agent').find((c) => c.meta.turn === 7)!; // Ann: own t1, obs t4, own t4, obs t7
      expect(call.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user']);
      expect(call.messages[2]!.content).toBe('Ann-t4');
      expect(call.messages[1]!.content).toContain('Cat-t3');
    });

    it('30: CustomizeComponent fills {kw} from shared memory written by an ExtractComponent, or with "" before any', async () => {
      const doc = baseConfig();
      doc.states.s1.roles = ['RB', 'RA'];
      doc.states.s1.agent_states.RA = {
        ExtractComponent: { extract_words: ['code'], system_prompt: 'Extract the code.', last_prompt: '' },
      };
      doc.states.s1.agent_states.RB = { CustomizeComponent: { template: 'Work on: {code}.', keywords: ['code'] } };
      const r = await runConfig(doc, { tool: [say('here <code>print(1)</code> done')] }, { maxTurns: 3 });
      const ben = r.calls('agent').filter((c) => c.meta.agent === 'Ben');
      expect(ben[0]!.system).toContain('Work on: .');
      expect(ben[1]!.system).toContain('Work on: print(1).');
    });

    it("31: ExtractComponent makes its own LLM call before the same agent's reply; without the tag the whole reply is stored", async () => {
      const doc = baseConfig();
      doc.states.s1.begin_role = 'RB';
      doc.states.s1.begin_query = 'let us write code';
      doc.states.s1.roles = ['RB', 'RA', 'RC'];
      doc.states.s1.agent_states.RA = {
        ExtractComponent: { extract_words: ['code'], system_prompt: 'Extract the code.', last_prompt: '' },
      };
      doc.states.s1.agent_states.RC = { CustomizeComponent: { template: 'Run this: {code}', keywords: ['code'] } };
      const r = await runConfig(doc, { tool: [say('no tags at all')] }, { maxTurns: 3 });
      const purposes = r.llm.calls.filter((c) => c.meta.agent !== undefined).map((c) => `${c.purpose}:${c.meta.agent}:${c.meta.turn}`);
      expect(purposes).toEqual(['tool:Ann:2', 'agent:Ann:2', 'agent:Cat:3']);
      const tool = r.calls('tool')[0]!;
      expect(tool.system).toBe('Extract the code.');
      expect(tool.last).toContain('let us write code'); // Ann's observation so far: what others said
      expect(tool.stream).toBe(false);
      expect(r.calls('agent').find((c) => c.meta.agent === 'Cat')!.system).toContain('Run this: no tags at all');
    });
  });

  describe('observation and memory', () => {
    const withS1Opening = (envType?: string) => {
      const doc = twoStates(2);
      if (envType) doc.environment_type = envType;
      doc.states.s1.begin_role = 'RA';
      doc.states.s1.begin_query = 'S1-OPEN';
      doc.states.s2.begin_role = 'RA';
      doc.states.s2.begin_query = 'S2-OPEN';
      doc.states.s2.roles = ['RA', 'RC', 'RB'];
      return doc;
    };

    it("32: cooperative: an agent's observation in state 2 includes messages from state 1", async () => {
      const r = await runConfig(withS1Opening(), {}, { maxTurns: 4 });
      expect(r.res.messages.map((m) => `${m.state}:${m.sender}`)).toEqual(['s1:Ann', 's1:Ben', 's2:Ann', 's2:Cat']);
      const cat = finalMessage(r, 4);
      expect(cat).toContain('S1-OPEN');
      expect(cat).toContain('Ben-t2');
      expect(cat).toContain('S2-OPEN');
    });

    it('33: competitive ("competive" or "competitive"): the observation has only messages since the state\'s begin turn', async () => {
      for (const spelling of ['competive', 'competitive']) {
        const r = await runConfig(withS1Opening(spelling), {}, { maxTurns: 4 });
        const cat = finalMessage(r, 4);
        expect(cat, spelling).toContain('S2-OPEN');
        expect(cat, spelling).not.toContain('S1-OPEN');
        expect(cat, spelling).not.toContain('Ben-t2');
      }
    });

    it("34: the new conversation has only the messages after the agent's own last message (all of them if it has not spoken)", async () => {
      const r = await runConfig(baseConfig(), {}, { maxTurns: 4 });
      const cat = finalMessage(r, 3);
      expect(cat).toContain('Ann-t1');
      expect(cat).toContain('Ben-t2');
      const ann = finalMessage(r, 4);
      expect(ann).toContain('Ben-t2');
      expect(ann).toContain('Cat-t3');
      expect(ann).not.toContain('Ann-t1');
    });

    it('35: a window longer than MAX_CHAT_HISTORY is cut to the last MAX_CHAT_HISTORY - 1 messages', async () => {
      const doc = manyAgents(6);
      doc.config.MAX_CHAT_HISTORY = '4';
      const r = await runConfig(doc, {}, { maxTurns: 6 });
      const a6 = finalMessage(r, 6); // 5 messages > 4: the last 3 remain
      expect(a6).toContain('A3-t3');
      expect(a6).toContain('A5-t5');
      expect(a6).not.toContain('A2-t2');
      expect(a6).not.toContain('A1-t1');
    });

    it("36: with MAX_CHAT_HISTORY M the state's LLM summarises after messages M, 2M, ...; the summary reaches the next judge, never an agent", async () => {
      const doc = baseConfig();
      doc.config.MAX_CHAT_HISTORY = '3';
      doc.states.s1.LLM = { model: 'summary-model', temperature: 1.0 };
      const r = await runConfig(doc, { summary: ['SUMMARY-ONE', 'SUMMARY-TWO'] }, { maxTurns: 7 });
      const summaries = r.calls('summary');
      expect(summaries.map((c) => c.meta.turn)).toEqual([3, 6]);
      expect(summaries.every((c) => c.model === 'summary-model')).toBe(true);
      const judgeAfter3 = r.calls('judge').find((c) => c.meta.turn === 3)!;
      expect(judgeAfter3.last).toContain('SUMMARY-ONE');
      expect(r.calls('judge').find((c) => c.meta.turn === 6)!.last).toContain('SUMMARY-TWO');
      for (const c of r.calls('agent')) expect(c.messages.map((m) => m.content).join('\n')).not.toMatch(/SUMMARY-/);
      expect(r.calls('agent').every((c) => c.model === 'gpt-3.5-turbo-16k-0613')).toBe(true);
    });

    it('37: before any summary the judge message shows the "no summary yet" placeholder', async () => {
      const r = await runConfig(baseConfig(), {}, { maxTurns: 2 });
      expect(r.calls('judge')[0]!.last).toContain('(none yet)');
    });

    it('38: with TOP_K k > 0 the relevant block holds the k most similar earlier messages, most similar first; observations exclude the last two', async () => {
      const doc = manyAgents(4);
      doc.config.TOP_K = '2';
      const replies = { 1: 'apple pie', 2: 'banana bread', 3: 'cherry and apple', 4: 'grape juice', 5: 'apple crumble' };
      const r = await runConfig(
        doc,
        { fallback: (q) => (q.meta.purpose === 'agent' ? byTurn(replies)(q) : q.meta.purpose === 'judge' ? '0' : 's') },
        { maxTurns: 6, embedder: markerEmbedder() },
      );
      const obs = finalMessage(r, 6); // A2: query "apple crumble"; candidates t1..t3
      const relevantPart = obs.slice(0, obs.indexOf('new conversation'));
      expect(relevantPart.indexOf('apple pie')).toBeGreaterThan(-1);
      expect(relevantPart.indexOf('cherry and apple')).toBeGreaterThan(relevantPart.indexOf('apple pie'));
      expect(relevantPart).not.toContain('banana bread');
      expect(relevantPart).not.toContain('grape juice'); // the second-to-last message is not a candidate
    });
  });

  describe('message recording', () => {
    it('39: name stripping keeps the text after the speaker\'s last "Name:"; another speaker\'s name is left alone', async () => {
      const r = await runConfig(baseConfig(), { agent: ['Ann: hello', 'Ben says Ann:y', 'Cat: ok', 'x Ann:y Ann:z'] }, { maxTurns: 4 });
      expect(r.res.messages.map((m) => m.content)).toEqual([' hello', 'Ben says Ann:y', ' ok', 'z']);
    });

    it("40: a user turn records exactly the typed text, and the user's LLM is never called", async () => {
      const doc = baseConfig();
      doc.config.User_Names = '["Ben"]';
      const r = await runConfig(doc, {}, { maxTurns: 3, answers: ['  Ben: typed <b>text</b>  '] });
      expect(r.res.messages[1]).toMatchObject({ sender: 'Ben', role: 'RB', kind: 'human', content: '  Ben: typed <b>text</b>  ' });
      expect(r.llm.calls.some((c) => c.meta.agent === 'Ben')).toBe(false);
    });

    it("42: every message has the sender's role in the current state and the sender's name", async () => {
      const doc = twoStates(2);
      doc.agents.Ann.roles.s2 = 'RB';
      doc.agents.Ben.roles.s2 = 'RA';
      const r = await runConfig(doc, {}, { maxTurns: 4 });
      expect(r.res.messages.map((m) => `${m.state}:${m.sender}:${m.role}`)).toEqual(['s1:Ann:RA', 's1:Ben:RB', 's2:Ben:RA', 's2:Ann:RB']);
    });
  });

  describe('config and validation', () => {
    const twoAgents = () => {
      const doc = baseConfig();
      delete doc.agents.Cat;
      delete doc.states.s1.agent_states.RC;
      doc.states.s1.roles = ['RA', 'RB'];
      doc.config.User_Names = '["Ben"]';
      doc.states.s1.begin_role = 'RA';
      doc.states.s1.begin_query = 'Hello, how can I help?';
      return doc;
    };

    it('43: a two-agent config is rejected if the root begin role is a user or the root has no begin_query', () => {
      expect(() => importConfig(twoAgents())).not.toThrow();
      const userBegins = twoAgents();
      userBegins.states.s1.begin_role = 'RB';
      expect(() => importConfig(userBegins)).toThrow(/played by the human Ben/);
      const noQuery = twoAgents();
      delete noQuery.states.s1.begin_query;
      expect(() => importConfig(noQuery)).toThrow(SopError);
      expect(() => importConfig(noQuery)).toThrow(/has no begin_query/);
    });

    it('44: without LLM blocks the model is gpt-3.5-turbo-16k-0613 at 0.3; an agent uses agent_states[role].LLM, never states[s].LLM', async () => {
      const temps: Array<[string, string, number | undefined]> = [];
      class Recording extends ScriptedLlm {
        override async chat(req: ChatRequest, o?: Parameters<ScriptedLlm['chat']>[1]) {
          temps.push([`${req.meta.purpose}:${req.meta.agent ?? ''}`, req.model, req.temperature]);
          return super.chat(req, o);
        }
      }
      const doc = baseConfig();
      doc.states.s1.LLM = { model: 'state-model', temperature: 1.0 };
      doc.states.s1.agent_states.RB.LLM = { model: 'role-model', temperature: 0.7 };
      const { sop } = importConfig(doc);
      const { Run } = await import('../src/api/engine/run-with-features.js');
      await new Run({ sop, file: 'config.json', llm: new Recording(), maxTurns: 2 }).run();
      expect(temps).toContainEqual(['agent:Ann', 'gpt-3.5-turbo-16k-0613', 0.3]);
      expect(temps).toContainEqual(['agent:Ben', 'role-model', 0.7]);
      expect(temps).toContainEqual(['judge:', 'gpt-3.5-turbo-16k-0613', 0.3]);
    });

    it('45: ACTIVE_MODE "0" adds the concise instruction to the system and last prompts of every call; other values do not', async () => {
      const concise = renderV1('concise', {});
      const doc = baseConfig();
      doc.config.ACTIVE_MODE = '0';
      doc.config.MAX_CHAT_HISTORY = '2';
      doc.states.s1.controller = { controller_type: 'rule', judge_last_prompt: 'Answer <end>0</end> or <end>1</end>.' };
      doc.states.s1.agent_states.RA.ExtractComponent = { extract_words: ['x'], system_prompt: 'extract', last_prompt: '' };
      const on = await runConfig(doc, { speaker: Array(5).fill(say('<end>RA</end>')) }, { maxTurns: 3 });
      expect(new Set(on.llm.calls.map((c) => c.purpose))).toEqual(new Set(['agent', 'tool', 'judge', 'speaker', 'summary']));
      for (const c of on.llm.calls) {
        expect(c.system.endsWith(concise), c.purpose).toBe(true);
        if (c.purpose !== 'summary') expect(c.last.endsWith(concise), c.purpose).toBe(true);
      }
      for (const mode of ['1', undefined]) {
        const off = baseConfig();
        if (mode) off.config.ACTIVE_MODE = mode;
        const r = await runConfig(off, {}, { maxTurns: 3 });
        expect(r.llm.calls.some((c) => c.messages.some((m) => m.content.includes(concise)))).toBe(false);
      }
    });

    it('46: unknown component keys (e.g. "demonstration") are reported with their key path, and the run goes on', async () => {
      const doc = baseConfig();
      doc.states.s1.agent_states.RA.demonstration = { demonstrations: 'DEMO-TEXT' };
      doc.states.s1.agent_states.RA.Telepathy = { level: 3 };
      const { warnings } = importConfig(doc);
      expect(warnings.find((w) => w.pointer === '/states/s1/agent_states/RA/demonstration')?.message).toMatch(/misspelt/);
      expect(warnings.find((w) => w.pointer === '/states/s1/agent_states/RA/Telepathy')?.message).toMatch(/unknown component/);
      const r = await runConfig(doc, {}, { maxTurns: 1 });
      expect(r.res.messages).toHaveLength(1);
      expect(r.calls('agent')[0]!.system).toContain('DEMO-TEXT'); // the alias is read as demonstrations
    });
  });

  describe('streaming', () => {
    it('47: agent calls stream, judge/router/summary/tool calls do not; the message is the concatenation of the streamed chunks', async () => {
      const doc = baseConfig();
      doc.config.MAX_CHAT_HISTORY = '2';
      doc.states.s1.controller.controller_type = 'rule';
      doc.states.s1.agent_states.RA.ExtractComponent = { extract_words: ['x'], system_prompt: 'extract', last_prompt: '' };
      const long = 'A fairly long reply, streamed in several small pieces by the scripted model.';
      const r = await runConfig(doc, { agent: [long, long], speaker: Array(5).fill(say('<end>RA</end>')) }, { maxTurns: 3 });
      for (const c of r.llm.calls) expect(c.stream, c.purpose).toBe(c.purpose === 'agent');
      const deltas = r.events.filter((e) => e.type === 'delta').map((e) => (e as { text: string }).text);
      expect(deltas.length).toBeGreaterThan(5);
      expect(deltas.join('')).toBe(long + long + r.res.messages[2]!.content);
      expect(r.res.messages[0]!.content).toBe(long);
    });
  });
});

describe('Agents 1.0 safe quirks under --compat agents-v1', () => {
  it('4: an explicit begin_role without begin_query opens with a single space (clean: an LLM call)', async () => {
    const doc = baseConfig();
    doc.states.s1.begin_role = 'RB';
    const compat = await runConfig(doc, {}, { maxTurns: 1, compat: 'agents-v1' });
    expect(compat.res.messages[0]).toMatchObject({ sender: 'Ben', content: ' ' });
    expect(compat.calls('agent')).toHaveLength(0);
    const clean = await runConfig(doc, { agent: ['Ben opens'] }, { maxTurns: 1 });
    expect(clean.res.messages[0]!.content).toBe('Ben opens');
  });

  it('17: re-entering a state gives no begin turn and continues its turn count and rotation (clean: a fresh visit)', async () => {
    const doc = twoStates(2);
    doc.relations.s2 = { '0': 's2', '1': 's1' };
    doc.states.s1.begin_role = 'RA';
    doc.states.s1.begin_query = 'S1-OPEN';
    doc.states.s2.controller.max_chat_nums = 1;
    const run = (compat: boolean) =>
      runConfig(
        doc,
        { fallback: (q) => (q.meta.purpose === 'judge' ? '0' : `${q.meta.agent}-t${q.meta.turn}`) },
        { maxTurns: 5, ...(compat ? { compat: 'agents-v1' as const } : {}) },
      );
    const compat = await run(true);
    // s1: Ann (begin), Ben; s2: Ann; back in s1: no begin turn, chat_nums already 2 = max, so one routed turn (Ann, after Ben) and out again.
    expect(compat.res.messages.map((m) => `${m.state}:${m.sender}:${m.kind}`)).toEqual([
      's1:Ann:begin',
      's1:Ben:speech',
      's2:Ann:speech',
      's1:Ann:speech',
      's2:Ben:speech',
    ]);
    const clean = await run(false);
    expect(clean.res.messages.map((m) => `${m.state}:${m.sender}:${m.kind}`)).toEqual([
      's1:Ann:begin',
      's1:Ben:speech',
      's2:Ann:speech',
      's1:Ann:begin',
      's1:Ben:speech',
    ]);
  });

  it('22: the configured call_last_prompt is not sent and the choices always ask for <end> (clean: sent, with the configured tag)', async () => {
    const doc = baseConfig();
    doc.states.s1.controller = { controller_type: 'rule', call_last_prompt: 'CALL-LAST', call_extract_words: 'pick' };
    const compat = await runConfig(doc, { speaker: [say('<pick>RC</pick>')] }, { maxTurns: 2, compat: 'agents-v1' });
    const c = compat.calls('speaker')[0]!;
    expect(c.system + c.last).not.toContain('CALL-LAST');
    expect(c.system).toContain('<end>RB</end>');
    expect(c.system).not.toContain('<pick>');
    expect(compat.senders[1]).toBe('Cat'); // the reply is still read from the configured tag
    const clean = await runConfig(doc, { speaker: [say('<pick>RC</pick>')] }, { maxTurns: 2 });
    const k = clean.calls('speaker')[0]!;
    expect(k.system + k.last).toContain('CALL-LAST');
    expect(k.system).toContain('<pick>RB</pick>');
  });

  it('29: stored observations keep the last prompts appended to them, so later calls show them (clean: copies)', async () => {
    const doc = baseConfig();
    doc.states.s1.begin_role = 'RA';
    doc.states.s1.begin_query = 'hello';
    const history = async (compat: boolean) => {
      const r = await runConfig(doc, {}, { maxTurns: 7, ...(compat ? { compat: 'agents-v1' as const } : {}) });
      const call = r.calls('agent').find((c) => c.meta.turn === 7)!; // Ann: own t1, obs t4, own t4, obs t7
      return call.messages
        .slice(1, -1)
        .map((m) => m.content)
        .join('\n');
    };
    expect(await history(true)).toContain('on behalf of Ann');
    expect(await history(false)).not.toContain('on behalf of Ann');
  });
});

describe('Agents 1.0 runs and checkpoints', () => {
  it('a run resumed from a checkpoint restores private and shared memory, so later prompts are the same', async () => {
    const doc = baseConfig();
    doc.states.s1.agent_states.RB.ExtractComponent = { extract_words: ['plan'], system_prompt: 'extract', last_prompt: '' };
    doc.states.s1.agent_states.RC.CustomizeComponent = { template: 'Plan: {plan}', keywords: ['plan'] };
    const plans = { tool: [() => '<plan>PLAN-A</plan>', () => '<plan>PLAN-B</plan>'] };
    const full = await runConfig(doc, plans, { maxTurns: 7 });
    const checkpoint = full.events.find((e) => e.type === 'checkpoint' && e.turn === 5) as Extract<
      (typeof full.events)[number],
      { type: 'checkpoint' }
    >;
    expect(checkpoint.snapshot.extensions).toHaveProperty('v1');
    const resumed = await runConfig(
      doc,
      {},
      {
        // no tool calls left to make: PLAN-B comes from the checkpoint
        maxTurns: 7,
        resume: {
          mode: 'resume',
          snapshot: JSON.parse(JSON.stringify(checkpoint.snapshot)),
          messages: full.res.messages.slice(0, 5).map((m) => ({ ...m })),
        },
      },
    );
    expect(resumed.res.messages.map((m) => m.content)).toEqual(full.res.messages.map((m) => m.content));
    expect(resumed.calls('tool')).toHaveLength(0);
    for (const turn of [6, 7]) {
      const a = full.calls('agent').find((c) => c.meta.turn === turn)!;
      const b = resumed.calls('agent').find((c) => c.meta.turn === turn)!;
      expect(b.messages, `turn ${turn}`).toEqual(a.messages);
    }
    expect(resumed.calls('agent').find((c) => c.meta.turn === 6)!.system).toContain('Plan: PLAN-B');
    expect(resumed.calls('agent').find((c) => c.meta.turn === 7)!.messages.length).toBeGreaterThan(3); // Ann's earlier memory came back
  });
});

describe('Agents 1.0 components with side effects', () => {
  it("CodeComponent writes the extracted code to output_code/ inside the run's workspace, and nowhere without one", async () => {
    const { mkdtempSync, readFileSync, existsSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const doc = baseConfig();
    doc.states.s1.agent_states.RA.CodeComponent = { file_name: '../../escape.py', keyword: 'code' };
    const workspace = join(mkdtempSync(join(tmpdir(), 'sop-ws-')), 'workspace');
    const code = '<code>\n```python\nprint("hi")\n```\n</code>';
    const r = await runConfig(doc, { tool: [() => code] }, { maxTurns: 1, agentsV1: { workspace } });
    expect(readFileSync(join(workspace, 'output_code', 'escape.py'), 'utf8')).toBe('print("hi")\n');
    expect(existsSync(join(workspace, '..', '..', 'escape.py'))).toBe(false);
    expect(r.events.some((e) => e.type === 'file_written' && e.path === 'workspace/output_code/escape.py')).toBe(true);
    const none = await runConfig(doc, { tool: [() => code] }, { maxTurns: 1 });
    expect(none.events.some((e) => e.type === 'warning' && /no workspace folder/.test(e.message))).toBe(true);
  });
});
