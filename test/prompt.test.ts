// Prompt assembly from components (docs/agents-v1-semantics.md §3.7, §5 items 24-28 and 39) and reply processing.
import { describe, expect, it } from 'vitest';
import { roleComponents } from '../src/core/agent/components.js';
import { stripSpeakerName } from '../src/core/agent/output.js';
import { extractAllTags, extractTag } from '../src/shared/util/tags.js';
import { Run, type RunOptions } from '../src/api/engine/run-with-features.js';
import { validateSopDocument } from '../src/api/loader/checked-load.js';
import { TemplateError } from '../src/core/prompt/templates.js';
import { ScriptedLlm, type Script } from './helpers/scripted-llm.js';

/** Ann (RA) and Ben (RB) in state s; Ben opens with a fixed line, so Ann's first call is turn 2. */
function sopWith(annComponents: Record<string, unknown>, extra: Record<string, unknown> = {}, state: Record<string, unknown> = {}) {
  return validateSopDocument(
    {
      name: 'prompt-test',
      inputs: { goal: { default: 'find the leak' }, city: { default: 'Lyon' } },
      agents: { Ann: { style: 'dry wit', roles: { s: 'RA' } }, Ben: { roles: { s: 'RB' } } },
      root: 's',
      states: {
        s: {
          environment_prompt: 'A plumbing shop in {{inputs.city}}.',
          roles: ['RA', 'RB'],
          begin_role: 'RB',
          begin_query: 'Hello Ann.',
          components: { RA: annComponents },
          next_states: { '0': 's', '1': 'end' },
          ...state,
        },
        end: { final: true },
      },
      ...extra,
    },
    'prompt-test.sop.json',
  ).sop;
}

async function annCalls(sop: ReturnType<typeof sopWith>, script: Script = {}, options: Partial<RunOptions> = {}) {
  const llm = new ScriptedLlm(script);
  const result = await new Run({ sop, file: 'p', llm, maxTurns: 2, ...options }).run();
  if (result.error) throw result.error;
  return { calls: llm.of('agent').filter((c) => c.meta.agent === 'Ann'), result, llm };
}

/** Index of each needle in text; all must be present. */
function positions(text: string, needles: string[]): number[] {
  return needles.map((n) => {
    const at = text.indexOf(n);
    expect(at, `"${n}" missing from:\n${text}`).toBeGreaterThanOrEqual(0);
    return at;
  });
}
const increasing = (xs: number[]) => xs.every((x, i) => i === 0 || x > xs[i - 1]!);

describe('agent prompt assembly', () => {
  it('puts environment_prompt first, then the components in config order, in the system prompt', async () => {
    const sop = sopWith({
      rule: 'RULE-TEXT',
      task: 'TASK-TEXT',
      demonstrations: ['DEMO-ONE', 'DEMO-TWO'],
      cot: 'COT-STEP',
      style: 'Senior plumber',
      system: 'SYSTEM-TEXT',
      last: 'LAST-TEXT',
      output: 'speech',
    });
    const { calls } = await annCalls(sop, { agent: ['<speech>ok</speech>'] });
    const sys = calls[0]!.system;
    expect(sys.startsWith('A plumbing shop in Lyon.')).toBe(true);
    const order = positions(sys, [
      'A plumbing shop',
      'RULE-TEXT',
      'TASK-TEXT',
      'DEMO-ONE',
      'DEMO-TWO',
      'COT-STEP',
      'Senior plumber',
      'SYSTEM-TEXT',
    ]);
    expect(increasing(order)).toBe(true);
    expect(sys).toContain('Ann');
    expect(sys).toContain('dry wit'); // the agent's style joins the role's style text
    expect(sys).toMatch(/1\. COT-STEP/); // steps are numbered from 1
    // last and output belong to the last prompt, never the system prompt
    expect(sys).not.toContain('LAST-TEXT');
    expect(sys).not.toContain('<speech>');
  });

  it('a different config order gives a different system prompt order', async () => {
    const sop = sopWith({ task: 'TASK-TEXT', style: 'Senior plumber', rule: 'RULE-TEXT' });
    const sys = (await annCalls(sop)).calls[0]!.system;
    expect(increasing(positions(sys, ['TASK-TEXT', 'Senior plumber', 'RULE-TEXT']))).toBe(true);
  });

  it('puts last and the output instruction in the final message, which ends with the on-behalf-of line', async () => {
    const sop = sopWith({ task: 'TASK-TEXT', last: 'LAST-TEXT', output: 'speech' });
    const { calls } = await annCalls(sop, { agent: ['<speech>ok</speech>'] });
    const call = calls[0]!;
    const final = call.messages.at(-1)!;
    expect(final.role).toBe('user');
    expect(increasing(positions(final.content, ['LAST-TEXT', '<speech>', 'on behalf of Ann']))).toBe(true);
    expect(final.content).not.toContain('TASK-TEXT');
    // The observation (Ben's opening) comes before it as a user message.
    expect(call.messages.slice(1, -1)).toContainEqual({ role: 'user', content: expect.stringContaining('Hello Ann.') });
  });

  it('without components, the prompt still names the agent, its role and style', async () => {
    const sop = sopWith({});
    const { calls } = await annCalls(sop);
    expect(calls[0]!.system).toMatch(/Ann.*RA.*dry wit/s);
    expect(calls[0]!.last).toContain('on behalf of Ann (RA)');
  });

  it('renders {{inputs.x}} and {{goal}} in component texts and the environment prompt', async () => {
    const sop = sopWith({ task: 'Goal: {{goal}} in {{inputs.city}}', last: 'Remember {{inputs.city}}' });
    const { calls } = await annCalls(sop, {}, { inputs: { goal: 'fix the tap' } });
    expect(calls[0]!.system).toContain('Goal: fix the tap in Lyon');
    expect(calls[0]!.system).toContain('A plumbing shop in Lyon.');
    expect(calls[0]!.last).toContain('Remember Lyon');
  });

  it("sends the agent's own earlier messages as assistant messages and others' as user messages", async () => {
    const sop = sopWith({});
    const { calls } = await annCalls(sop, { agent: ['first from Ann', 'reply from Ben'] }, { maxTurns: 4 });
    expect(calls).toHaveLength(2);
    const history = calls[1]!.messages.slice(1, -1);
    expect(history).toContainEqual({ role: 'assistant', content: 'first from Ann' });
    expect(history).toContainEqual({ role: 'user', content: expect.stringContaining('reply from Ben') });
    expect(history.findIndex((m) => m.content === 'first from Ann')).toBeLessThan(
      history.findIndex((m) => m.content.includes('reply from Ben')),
    );
  });

  it('an inline template in the SOP overrides the built-in one', async () => {
    const sop = sopWith(
      { task: 'TASK-TEXT' },
      {
        templates: {
          agent_system: 'CUSTOM SYSTEM for {{agent.name}} ({{agent.role}}) in {{state.name}}; goal={{goal}}',
          agent_last: 'CUSTOM LAST {{agent.name}}',
        },
      },
    );
    const { calls } = await annCalls(sop);
    expect(calls[0]!.system).toBe('CUSTOM SYSTEM for Ann (RA) in s; goal=find the leak');
    expect(calls[0]!.last).toBe('CUSTOM LAST Ann');
  });

  it('an inline judge template is used for judge calls', async () => {
    const sop = sopWith({}, { templates: { judge_system: 'JUDGE {{state.name}} keys:{{#each keys}} {{key}}{{/each}}' } });
    const { llm } = await annCalls(sop);
    expect(llm.of('judge')[0]!.system).toBe('JUDGE s keys: 0 1');
  });

  it('a broken inline template fails before the run starts, naming it', () => {
    // Loading the SOP refuses it (sop validate, sop run); a Run given the document anyway refuses it too.
    expect(() => sopWith({}, { templates: { agent_last: 'oops {{#if x}} never closed' } })).toThrow(
      /\/templates\/agent_last: \{\{#if\}\} is not closed/,
    );
    const sop = sopWith({});
    sop.templates = { agent_last: 'oops {{#if x}} never closed' };
    expect(() => new Run({ sop, file: 'p', llm: new ScriptedLlm() })).toThrow(TemplateError);
    expect(() => new Run({ sop, file: 'p', llm: new ScriptedLlm() })).toThrow(/\/templates\/agent_last/);
  });

  it('picks the LLM settings of the most specific level', async () => {
    const sop = sopWith(
      { llm: { model: 'role-model' } },
      { llm: { model: 'sop-model', temperature: 0.9 } },
      { llm: { model: 'state-model' } },
    );
    const { calls, llm } = await annCalls(sop);
    expect(calls[0]!.model).toBe('role-model');
    expect(llm.of('judge')[0]!.model).toBe('state-model');
  });
});

describe('reply processing', () => {
  it('strips the speaker name prefix and extracts the output tag before recording', async () => {
    const sop = sopWith({ output: 'speech' });
    const { result } = await annCalls(sop, { agent: ['Ann: thinking aloud <speech> The pipe is fine. </speech> (aside)'] });
    expect(result.messages[1]).toMatchObject({ sender: 'Ann', content: 'The pipe is fine.' });
  });

  it('records the whole reply when the output tag is missing', async () => {
    const sop = sopWith({ output: 'speech' });
    const { result } = await annCalls(sop, { agent: ['Ann: no tags here'] });
    expect(result.messages[1]!.content).toBe('no tags here');
  });

  it('stripSpeakerName: leading prefixes only (clean) vs. last occurrence (agents-v1)', () => {
    expect(stripSpeakerName('Ann: hello', 'Ann')).toBe('hello');
    expect(stripSpeakerName('Ann: Ann: hello', 'Ann')).toBe('hello');
    expect(stripSpeakerName('**Ann**: hello', 'Ann')).toBe('hello');
    expect(stripSpeakerName('Ann： 你好', 'Ann')).toBe('你好');
    expect(stripSpeakerName('x Ann:y Ann:z', 'Ann')).toBe('x Ann:y Ann:z');
    expect(stripSpeakerName('Ben said Ann: hi', 'Ben')).toBe('Ben said Ann: hi');
    expect(stripSpeakerName('Anna: hi', 'Ann')).toBe('Anna: hi');
    expect(stripSpeakerName('Dr. X: hi', 'Dr. X')).toBe('hi');
    expect(stripSpeakerName('Ann: hello', 'Ann', 'agents-v1')).toBe(' hello');
    expect(stripSpeakerName('x Ann:y Ann:z', 'Ann', 'agents-v1')).toBe('z');
    expect(stripSpeakerName('Ann: hello', 'Ben', 'agents-v1')).toBe('Ann: hello');
  });

  it('a reply by one agent that names another keeps the name', async () => {
    const sop = sopWith({});
    const { result } = await annCalls(sop, { agent: ['Ben: you are wrong'] });
    expect(result.messages[1]!.content).toBe('Ben: you are wrong');
  });

  it('extractTag takes the first occurrence; extractAllTags joins all (judge semantics)', () => {
    expect(extractTag('a <x> one </x> b <x>two</x>', 'x')).toBe('one');
    expect(extractTag('no tag', 'x')).toBeUndefined();
    expect(extractTag('<x>multi\nline</x>', 'x')).toBe('multi\nline');
    expect(extractTag('<a.b>dots</a.b>', 'a.b')).toBe('dots');
    expect(extractAllTags('<end>1</end><end>0</end>', 'end')).toBe('1 0');
  });
});

describe('roleComponents', () => {
  it('keeps config order and separates system, last and output', () => {
    const c = roleComponents(
      { cot: ['a', 'b'], task: 'T {{inputs.x}}', last: 'L', style: { role: 'R', style: 'S' }, output: 'o' },
      'agent style',
      { inputs: { x: 'X' } },
      '/states/s/components/RA',
    );
    expect(c.system.map((p) => p.kind)).toEqual(['cot', 'task', 'style']);
    expect(c.system[1]!.text).toBe('T X');
    expect(c.system[2]).toMatchObject({ role: 'R', style: 'S' });
    expect(c.last).toEqual(['L']);
    expect(c.output).toBe('o');
  });

  it('a style given as a string keeps the agent style', () => {
    const c = roleComponents({ style: 'Host' }, 'calm', {}, '/x');
    expect(c.system[0]).toMatchObject({ kind: 'style', role: 'Host', style: 'calm' });
  });
});
