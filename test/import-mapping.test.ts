// How `sop import` maps each part of an Agents 1.0 config, and how it reports what it cannot carry.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { importAgentsV1 } from '../src/features/agents-v1/import/agents-v1.js';
import { isAgentsV1Config } from '../src/features/agents-v1/import/detect.js';
import { SopError } from '../src/format/sop/diagnostics.js';
import { validateSopDocument } from '../src/api/loader/checked-load.js';
import { baseConfig, importConfig } from './helpers/v1.js';

const warningAt = (w: { pointer: string; message: string }[], pointer: string) =>
  w
    .filter((d) => d.pointer === pointer)
    .map((d) => d.message)
    .join('\n');
const errorsOf = (doc: unknown) => {
  try {
    importAgentsV1(doc, { file: 'c.json' });
  } catch (err) {
    if (err instanceof SopError) return err.diagnostics.filter((d) => d.severity === 'error');
    throw err;
  }
  return [];
};

describe('sop import: mapping', () => {
  it('recognises an Agents 1.0 config by its shape only', () => {
    expect(isAgentsV1Config(baseConfig())).toBe(true);
    expect(isAgentsV1Config({ name: 'x', agents: {}, root: 's', states: { s: { roles: ['A'] } } })).toBe(false);
    expect(isAgentsV1Config({ config: {}, relations: {}, states: { s: { roles: ['A'] } } })).toBe(false);
  });

  it('maps relations, controller keys, begin turns, environment and the finish state', () => {
    const doc = baseConfig();
    doc.environment_type = 'competive';
    doc.config = { MAX_CHAT_HISTORY: '7', TOP_K: '2', ACTIVE_MODE: '0', User_Names: '["Cat"]', API_BASE: 'http://127.0.0.1:9/v1' };
    doc.LLM = { model: 'god-model', temperature: 0, log_path: 'logs/god' };
    doc.states.s1 = {
      ...doc.states.s1,
      begin_role: 'RB',
      begin_query: 'Ben opens',
      environment_prompt: 'A {{scene}}',
      summary_system_prompt: 'Summarise tightly.',
      controller: {
        controller_type: 'rule',
        max_chat_nums: 9,
        judge_system_prompt: 'Judge well.',
        judge_last_prompt: 'Say <end>0</end> or <end>1</end>.',
        judge_extract_words: 'end',
        call_system_prompt: 'Choose.',
        call_last_prompt: 'Now choose.',
        call_extract_words: 'pick',
      },
    };
    const { sop } = importConfig(doc);
    expect(sop.environment).toEqual({ type: 'competitive', max_chat_history: 7, top_k: 2 });
    expect(sop.agents_v1).toMatchObject({ concise: true, name_stripping: 'agents-v1' });
    expect(sop.llm).toEqual({ model: 'gpt-3.5-turbo-16k-0613', temperature: 0.3, base_url: 'http://127.0.0.1:9/v1' });
    expect(sop.agents.Cat).toEqual({ style: 'dry and brief', roles: { s1: 'RC' }, human: true });
    expect(sop.states.end_state).toEqual({ final: true });
    const s1 = sop.states.s1!;
    expect(s1.next_states).toEqual({ 0: 's1', 1: 'end_state' });
    expect(s1).toMatchObject({
      begin_role: 'RB',
      begin_query: 'Ben opens',
      environment_prompt: 'A \\{{scene}}',
      summary: { system_prompt: 'Summarise tightly.' },
    });
    expect(s1.controller).toEqual({
      type: 'rule',
      max_turns: 9,
      llm: { model: 'god-model', temperature: 0 },
      judge: { system_prompt: 'Judge well.', last_prompt: 'Say <end>0</end> or <end>1</end>.' },
      speaker: { system_prompt: 'Choose.', last_prompt: 'Now choose.', extract_word: 'pick' },
    });
    expect(s1.components?.RC).toBeUndefined(); // a human's role has no components
  });

  it('keeps the component order and maps every component kind', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sop-map-'));
    writeFileSync(join(dir, 'kb.json'), JSON.stringify({ 0: { q: 'q?', a: 'a.', chunk: 'c', emb: [0.1, 0.2] } }));
    const doc = baseConfig();
    doc.states.s1.agent_states.RA = {
      LLM_type: 'OpenAI',
      LLM: { model: 'role-model', temperature: 0.5 },
      last: { last_prompt: 'L' },
      task: { task: 'T' },
      ExtractComponent: { extract_words: ['plan'], system_prompt: 'S', last_prompt: '' },
      CustomizeComponent: { template: 'Use {plan}', keywords: ['plan'] },
      KnowledgeBaseComponent: { type: 'QA', top_k: 2, knowledge_path: 'kb.json' },
      CodeComponent: { file_name: '../evil/game.py', keyword: 'code' },
      cot: { demonstrations: ['one', 'two'] },
      output: { output: 'reply' },
      system: { system_prompt: 'SYS' },
    };
    const { sop, warnings } = importAgentsV1(doc, { file: join(dir, 'config.json'), outFile: join(dir, 'out', 'x.sop.json') });
    const ra = sop.states.s1!.components!.RA!;
    expect(Object.keys(ra)).toEqual(['last', 'task', 'extract', 'customize', 'knowledge', 'code', 'cot', 'output', 'system', 'llm']);
    expect(ra).toMatchObject({
      extract: { words: ['plan'], system_prompt: 'S' },
      customize: { template: 'Use {plan}', keywords: ['plan'] },
      knowledge: { path: '../kb.json', mode: 'qa', top_k: 2 },
      code: { file: 'game.py', keyword: 'code' },
      llm: { model: 'role-model', temperature: 0.5 },
    });
    expect(warningAt(warnings, '/states/s1/agent_states/RA/CodeComponent/file_name')).toMatch(/inside the run's workspace/);
  });

  it('never copies credentials: API keys and tool secrets become warnings', () => {
    const doc = baseConfig();
    doc.config.API_KEY = 'sk-secret-123';
    doc.config.PROXY = 'http://proxy:1';
    doc.states.s1.agent_states.RA.FlightComponent = { api: 'client-id-xyz', secret: 'secret-xyz' };
    doc.states.s1.agent_states.RB.WebSearchComponent = { engine_name: 'google', api: { google: { api_key: 'gkey', cse_id: 'cse' } } };
    const { sop, warnings } = importConfig(doc);
    const text = JSON.stringify(sop);
    for (const secret of ['sk-secret-123', 'client-id-xyz', 'secret-xyz', 'gkey', 'proxy:1']) expect(text).not.toContain(secret);
    expect(warningAt(warnings, '/config/API_KEY')).toMatch(/OPENAI_API_KEY/);
    expect(warningAt(warnings, '/config/PROXY')).toMatch(/HTTPS_PROXY/);
    expect(sop.states.s1!.components!.RA!.tools).toEqual([{ name: 'flight_search', needs: expect.stringContaining('Amadeus') }]);
    expect(sop.states.s1!.components!.RB!.tools).toEqual([
      { name: 'web_search', needs: expect.any(String), settings: { engine: 'google' } },
    ]);
  });

  it('reports keys it cannot carry and problems it finds, at their key paths', () => {
    const doc = baseConfig();
    doc.unknown_top = 1;
    doc.states.s1.agent_state = {};
    doc.states.s1.summary_last_prompt = 'x';
    doc.states.s1.agent_states.RA.StaticComponent = { output: 'fixed' };
    doc.states.s2 = { roles: ['RA'], begin_query: 'orphan', agent_states: { RA: {} } };
    doc.relations.s2 = { 1: 's1' };
    doc.agents.Ann.roles.s2 = 'RA';
    const { warnings } = importConfig(doc);
    expect(warningAt(warnings, '/unknown_top')).toMatch(/unknown key/);
    expect(warningAt(warnings, '/states/s1/agent_state')).toMatch(/misspelt "agent_state"/);
    expect(warningAt(warnings, '/states/s1/summary_last_prompt')).toMatch(/never used/);
    expect(warningAt(warnings, '/states/s1/agent_states/RA/StaticComponent')).toMatch(/no effect/);
    expect(warningAt(warnings, '/states/s2/begin_query')).toMatch(/only with an explicit begin_role/);
    expect(warningAt(warnings, '/relations/s2/1')).toMatch(/read as "0"/);
    expect(warningAt(warnings, '/states/s2')).toMatch(/not reachable/);
  });

  // Issue 12: every component kind now runs in native SOPs too (src/core/agent/pipeline.ts), so the
  // warning this test used to expect for a SOP without agents_v1 is gone.
  it('does not warn about component kinds, with or without agents_v1 (every kind runs in both)', () => {
    const { sop } = importConfig(
      (() => {
        const d = baseConfig();
        d.states.s1.agent_states.RA.CodeComponent = { file_name: 'x.py', keyword: 'code' };
        return d;
      })(),
    );
    expect(validateSopDocument(sop, 'x.sop.json').warnings.filter((w) => /only in SOPs with "agents_v1"/.test(w.message))).toEqual([]);
    const { agents_v1: _, ...native } = sop;
    const warnings = validateSopDocument(native, 'x.sop.json').warnings;
    expect(warnings.find((w) => w.pointer === '/states/s1/components/RA/code')).toBeUndefined();
  });

  it('rejects what Agents 1.0 could not load, naming the key', () => {
    const bad = baseConfig();
    bad.relations.s1 = { x: 's1', 1: 'nowhere' };
    bad.states.s1.controller.controller_type = 'vote';
    bad.agents.Ann.roles.ghost = 'RA';
    bad.agents.Ben.roles.s1 = 'RZ';
    const errors = errorsOf(bad);
    expect(errors.map((e) => e.pointer).sort()).toEqual([
      '/agents/Ann/roles/ghost',
      '/agents/Ben/roles/s1',
      '/relations/s1/1',
      '/relations/s1/x',
      '/states/s1/controller/controller_type',
    ]);
    expect(errorsOf({ ...baseConfig(), root: 'missing' }).map((e) => e.pointer)).toEqual(['/root']);
  });
});
