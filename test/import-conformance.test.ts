// Every Agents 1.0 config of the conformance corpus imports with `sop import`, the SOP written
// passes `sop validate`, the import reports the problems the inventory of docs/agents-v1-semantics.md (§7) predicts,
// and `sop run` takes the original config directly, offline, to its finish state or --max-turns.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importAndValidate } from '../src/api/loader/import-and-validate.js';
import { MockProvider } from '../src/core/llm/mock.js';
import { Run } from '../src/api/engine/run-with-features.js';
import { loadSopFile } from '../src/api/loader/checked-load.js';
import { CONFORMANCE, ListHuman } from './helpers/v1.js';
import { spawnCliAsync, requireBuiltCli } from './helpers/cli.js';

/** Child processes of the CLI can be slow on a busy machine. */
const CLI_TIMEOUT = 60_000;
const ANSWERS = Array.from({ length: 30 }, (_, i) => ['Who is Mike?', 'I lost my cat', 'a toy for my son', 'yes, please book it'][i % 4]!);
let dir: string;
beforeAll(() => {
  requireBuiltCli();
  dir = mkdtempSync(join(tmpdir(), 'sop-import-'));
  writeFileSync(join(dir, 'answers.json'), JSON.stringify(ANSWERS));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function sop(args: string[]) {
  const r = await spawnCliAsync([...args], {
    cwd: dir,
    encoding: 'utf8',
    env: { ...process.env, SOP_DEBUG: '', SOP_CACHE_DIR: join(dir, 'cache') },
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

interface Case {
  path: string;
  /** Warnings the reference's inventory predicts: [key path, what the message says]. */
  warnings: Array<[string, RegExp]>;
  users: boolean;
  /** How a mock run ends: the finish state, or --max-turns 40 (a config that loops forever). */
  ends: 'finish' | 'max_turns';
}

const CASES: Case[] = [
  {
    path: 'Multi_Agent/debate/config.json',
    users: false,
    ends: 'finish',
    warnings: [
      ['/environment_type', /"competive" is read as "competitive"/],
      ['/config/ACTIVE_MODE', /concise mode ON/],
      ['/config/API_KEY', /never copied/],
      ['/config/GRADIO', /not carried/],
      ['/states/Affirmative_Task_Allocation_state/LLM', /only its environment summaries/],
      ['/states/Debate_Random_state/controller/call_last_prompt', /never sent/],
    ],
  },
  {
    path: 'Multi_Agent/software_company/config.json',
    users: false,
    ends: 'finish',
    warnings: [
      ['/states/debug_state/agent_states/Coder', /not in "roles", so it never speaks/],
      ['/states/debug_state/agent_states/Coder/CodeComponent', /run's workspace/],
      ['/states/develop_state/agent_states/Developer_1/rule/rule', /<title>\/<python>/],
      ['/config/API_KEY', /never copied/],
    ],
  },
  {
    path: 'Single_Agent/chat_bot/config.json',
    users: true,
    ends: 'max_turns',
    warnings: [
      ['/states/Response_state/agent_states/Yang bufan/demonstration', /misspelt component "demonstration"/],
      ['/relations', /never ends by itself/],
    ],
  },
  {
    path: 'Single_Agent/chat_bot/flight_example_config.json',
    users: true,
    ends: 'max_turns',
    warnings: [
      ['/states/Response_state/agent_states/Yang bufan/FlightComponent', /tool slot "flight_search".*network service and an API key/],
      ['/states/Response_state/agent_states/Yang bufan/FlightComponent/api', /never copied/],
      ['/states/Response_state/agent_states/Yang bufan/FlightComponent/secret', /never copied/],
      ['/states/Response_state/agent_states/Yang bufan/demonstration', /misspelt/],
    ],
  },
  {
    path: 'Single_Agent/customer_service/customer_knowledge.json',
    users: true,
    ends: 'max_turns',
    warnings: [
      ['/states/response_state/agent_states/customer service personnel/KnowledgeBaseComponent/knowledge_path', /re-embedded/],
      ['/temperature', /never used/],
      ['/log_path', /not carried/],
      ['/states/end_state', /not reachable/],
    ],
  },
  {
    path: 'Single_Agent/customer_service/customer_websearch.json',
    users: true,
    ends: 'max_turns',
    warnings: [
      ['/states/response_state/agent_states/customer service personnel/WebSearchComponent/engine_name', /placeholder/],
      ['/states/response_state/agent_states/customer service personnel/WebSearchComponent', /tool slot "web_search"/],
      ['/states/response_state/agent_states/customer service personnel/WebSearchComponent/api', /never copied/],
      ['/states/response_state/agent_states/user', /human plays this role/],
    ],
  },
  {
    path: 'Single_Agent/oculist_agent/config.json',
    users: true,
    ends: 'finish',
    warnings: [
      [
        '/states/knowledge_response/agent_states/Oculist/KnowledgeBaseComponent/knowledge_path',
        /1536 dimensions but Embed_Model "intfloat\/multilingual-e5-large" makes 1024/,
      ],
      ['/config/Embed_Model', /not carried/],
      ['/states/end_state', /finish state.*never run/],
      ['/relations/end_state', /never taken/],
      ['/states/knowledge_response_end', /not reachable/],
      ['/config/MIN_CATEGORY_SIM', /not carried/],
    ],
  },
  {
    path: 'Single_Agent/shopping_assistant/config.json',
    users: true,
    ends: 'finish',
    warnings: [
      ['/config/SHOPPING_SEARCH', /placeholder/],
      ['/states/shopping_state/agent_states/Shopping assistant/CategoryRequirementsComponent', /tool slot "product_search"/],
      ['/states/shopping_state/controller/judge_last_prompt', /without a closing <\/end>/],
      ['/states/shopping_state/agent_states/customer', /human plays this role/],
    ],
  },
];

describe('the Agents 1.0 conformance configs', () => {
  it('covers every config of the corpus', () => {
    const listed = spawnSync('find', [CONFORMANCE, '-name', '*.json'], { encoding: 'utf8' })
      .stdout.split('\n')
      .filter(Boolean)
      .filter((f) => /"agent_states"/.test(readFileSync(f, 'utf8')));
    expect(listed.map((f) => f.slice(CONFORMANCE.length + 1)).sort()).toEqual(CASES.map((c) => c.path).sort());
  });

  for (const c of CASES) {
    describe(c.path, () => {
      const file = join(CONFORMANCE, c.path);

      it('imports with the warnings the inventory predicts, each naming its key', () => {
        const { warnings } = importAndValidate(JSON.parse(readFileSync(file, 'utf8')), { file });
        for (const [pointer, message] of c.warnings) {
          const at = warnings.filter((w) => w.pointer === pointer);
          expect(at.map((w) => w.message).join('\n'), pointer).toMatch(message);
        }
        expect(warnings.every((w) => w.severity === 'warning' && w.pointer !== undefined)).toBe(true);
      });

      it('imports into a SOP file that validates, with no API key copied', () => {
        const out = join(dir, c.path.replace(/\//g, '_').replace(/\.json$/, '.sop.json'));
        const { sop: imported } = importAndValidate(JSON.parse(readFileSync(file, 'utf8')), { file, outFile: out });
        writeFileSync(out, JSON.stringify(imported, null, 2));
        expect(readFileSync(out, 'utf8')).not.toMatch(/REDACTED|API_KEY|api_key/);
        const { sop: reloaded } = loadSopFile(out); // what `sop validate` and `sop run` do with it
        expect(reloaded.agents_v1?.name_stripping).toBe('agents-v1');
      });

      it(
        `runs offline from the original config with the mock LLM${c.users ? ' and answers' : ''} to ${c.ends === 'finish' ? 'its finish state' : '--max-turns 40'}`,
        async () => {
          const { sop: loaded } = loadSopFile(file); // an Agents 1.0 config is recognised and imported
          const res = await new Run({
            sop: loaded,
            file,
            llm: new MockProvider(),
            maxTurns: 40,
            ...(c.users ? { human: new ListHuman(ANSWERS) } : {}),
            agentsV1: { workspace: join(dir, 'ws'), knowledgeCacheDir: join(dir, 'cache') },
          }).run();
          expect(res.error?.message).toBeUndefined();
          if (c.ends === 'finish') expect([res.status, res.finalState]).toEqual(['finished', 'end_state']);
          else expect([res.status, res.turns]).toEqual(['max_turns', 40]);
        },
        CLI_TIMEOUT,
      );
    });
  }

  it(
    'sop import writes a SOP file that sop validate accepts and sop run runs (the CLI, end to end)',
    async () => {
      const out = join(dir, 'customer.sop.json');
      const imported = await sop(['import', join(CONFORMANCE, 'Single_Agent/customer_service/customer_knowledge.json'), '-o', out]);
      expect(imported.code, imported.stderr).toBe(0);
      expect(imported.stderr).toMatch(/customer_knowledge\.json:\d+:\d+: \/config\/API_KEY: warning: API keys are never copied/);
      expect(JSON.parse(readFileSync(out, 'utf8')).$schema).toMatch(/schemas\/sop\.schema\.json$/);
      const validated = await sop(['validate', out]);
      expect(validated.code, validated.stderr).toBe(0);
      const run = await sop([
        'run',
        out,
        '--llm',
        'mock',
        '--max-turns',
        '5',
        '--quiet',
        '--answers',
        'answers.json',
        '--out',
        join(dir, 'runs'),
      ]);
      expect(run.code, run.stderr).toBe(0);
      expect(run.stderr).toMatch(/Stopped after --max-turns 5 turns/);
    },
    CLI_TIMEOUT,
  );

  it(
    'sop run takes an Agents 1.0 config directly',
    async () => {
      const run = await sop([
        'run',
        join(CONFORMANCE, 'Single_Agent/shopping_assistant/config.json'),
        '--llm',
        'mock',
        '--max-turns',
        '40',
        '--quiet',
        '--answers',
        'answers.json',
        '--out',
        join(dir, 'runs'),
      ]);
      expect(run.code, run.stderr).toBe(0);
      expect(run.stderr).toMatch(/Finished in state "end_state"/);
    },
    CLI_TIMEOUT,
  );

  it(
    'a config with a human and no --answers fails before the run with instructions',
    async () => {
      const r = await sop([
        'run',
        join(CONFORMANCE, 'Single_Agent/shopping_assistant/config.json'),
        '--llm',
        'mock',
        '--out',
        join(dir, 'runs'),
      ]);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(
        /Mike is played by a person \(User_Names in the Agents 1\.0 config\).*--llm mock replaces only the LLM.*--answers FILE/,
      );
      expect(r.stderr).not.toContain('    at ');
    },
    CLI_TIMEOUT,
  );
});
