// Issue 2 acceptance: every shipped SOP runs with `--llm mock`, unattended (no terminal, no
// --answers), except that people playing roles need --answers. Issue 11: the mock walks the
// graph, so every dry run ends in a final state, whichever key leads there, and reaches the
// sub-SOPs its commands call.
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MockProvider } from '../src/core/llm/mock.js';
import { Run } from '../src/api/engine/run-with-features.js';
import { loadSopFile } from '../src/format/sop/sop-file.js';
import { spawnCliAsync } from './helpers/cli.js';
const shipped = [
  ...readdirSync('sops')
    .filter((f) => f.endsWith('.sop.json'))
    .map((f) => join('sops', f)),
  ...readdirSync('examples').flatMap((d) =>
    readdirSync(join('examples', d))
      .filter((f) => f.endsWith('.sop.json'))
      .map((f) => join('examples', d, f)),
  ),
];

async function dryRun(file: string, extra: string[] = []) {
  const out = mkdtempSync(join(tmpdir(), 'sop-dry-'));
  // 60 turns, plus the steps of population states (each step is a turn)
  const doc = JSON.parse(readFileSync(file, 'utf8')) as { states: Record<string, { max_steps?: number }> };
  const steps = Object.values(doc.states).reduce((n, st) => n + (st.max_steps ?? 0), 0);
  const args = ['run', file, '--llm', 'mock', '--max-turns', String(60 + steps), '--out', out, ...extra];
  const r = await spawnCliAsync([...args], { encoding: 'utf8', input: '', timeout: 60_000 });
  const dir = join(out, readdirSync(out)[0] ?? '');
  const events = () =>
    readFileSync(join(dir, 'journal.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, any>);
  return { ...r, dir, events };
}

/** A SOP whose only way to its final state is judge key `finalKey`; the other keys lead to states that come straight back. */
function branchySop(finalKey: string, keys = ['1', '2', '3']): string {
  const side = keys.filter((k) => k !== finalKey);
  const sop = {
    name: `final-behind-${finalKey}`,
    agents: { Ann: { roles: { hub: 'Speaker', ...Object.fromEntries(side.map((k) => [`side${k}`, 'Speaker'])) } } },
    root: 'hub',
    states: {
      hub: {
        roles: ['Speaker'],
        components: { Speaker: { task: 'Talk.' } },
        next_states: { 0: 'hub', ...Object.fromEntries(keys.map((k) => [k, k === finalKey ? 'end' : `side${k}`])) },
      },
      ...Object.fromEntries(
        side.map((k) => [`side${k}`, { roles: ['Speaker'], components: { Speaker: { task: 'Talk.' } }, next_states: { 0: 'hub' } }]),
      ),
      end: { final: true },
    },
  };
  const file = join(mkdtempSync(join(tmpdir(), 'sop-branchy-')), 'branchy.sop.json');
  writeFileSync(file, JSON.stringify(sop));
  return file;
}

describe('shipped SOPs dry-run with the mock LLM', () => {
  it('finds the shipped SOPs', () => {
    expect(shipped).toContain('sops/jarvis.sop.json');
    expect(shipped).toContain('examples/debate/debate.sop.json');
  });

  for (const file of shipped) {
    it(`${file} runs to a final state`, async () => {
      const doc = JSON.parse(readFileSync(file, 'utf8')) as {
        agents: Record<string, { human?: boolean }>;
        mcp_servers?: object;
        inputs?: Record<string, unknown>;
        plugins?: string[];
      };
      const hasHuman = Object.values(doc.agents).some((a) => a.human);
      const answers = join(file, '..', 'answers.txt');
      // MCP servers start only with approval, even in a mock dry run: the shipped ones are allowed by name
      const allow = Object.keys(doc.mcp_servers ?? {}).flatMap((name) => ['--allow-mcp', name]);
      const goal = doc.inputs && 'goal' in doc.inputs ? ['--goal', 'a test goal'] : []; // a SOP without the input refuses --goal
      // plugin modules load only with approval: the shipped example's module is approved with --yes
      const plugins = doc.plugins?.length ? ['--yes'] : [];
      const r = await dryRun(file, ['--quiet', ...goal, ...(hasHuman ? ['--answers', answers] : []), ...allow, ...plugins]);
      expect(r.stderr).not.toMatch(/\n\s+at /);
      expect(r.status, r.stderr).toBe(0);
      expect(r.stderr).toMatch(/Finished in state/);
    });
  }

  it('the Jarvis dry run reaches the Coder and, through it, ExtendLibrary', async () => {
    const r = await dryRun('sops/jarvis.sop.json', ['--goal', 'a test goal', '--json']);
    expect(r.status, r.stderr).toBe(0);
    const flows = new Set<string>();
    const walk = (e: Record<string, any>, path: string[]) => {
      if (e.type !== 'subflow') return;
      flows.add([...path, e.flow].join('/'));
      walk(e.event, [...path, e.flow]);
    };
    for (const e of r.events()) walk(e, []);
    expect([...flows]).toEqual(expect.arrayContaining(['Coder-1', 'Coder-1/extend_library-1']));
    expect(r.events().at(-1)).toMatchObject({ type: 'run_finished', status: 'finished', final_state: 'done' });
  });

  it('reaches a final state that only judge key "2" (or "3") leads to', async () => {
    for (const key of ['2', '3']) {
      const r = await dryRun(branchySop(key), ['--quiet']);
      expect(r.status, r.stderr).toBe(0);
      expect(r.stderr).toMatch(/Finished in state "end"/);
      const judged = r
        .events()
        .filter((e) => e.type === 'judge' && e.state === 'hub')
        .map((e) => e.key as string);
      expect(judged.at(-1)).toBe(key);
    }
  });

  it('tries every key first over a few seeds, each run still ending in the final state', async () => {
    const file = branchySop('3');
    const first = new Set<string>();
    for (const seed of ['1', '2', '3']) {
      const r = await dryRun(file, ['--quiet', '--seed', seed]);
      expect(r.stderr).toMatch(/Finished in state "end"/);
      first.add(r.events().find((e) => e.type === 'judge' && e.key !== '0')!.key as string);
    }
    expect([...first].sort()).toEqual(['1', '2', '3']);
  });

  it('walks in process too; with walk: false the judge keeps answering "1" (the benchmarks\' looping debate)', async () => {
    const file = 'bench/fixtures/debate5.sop.json';
    const { sop } = loadSopFile(file);
    const walked = await new Run({ sop, file, llm: new MockProvider(), maxTurns: 300 }).run();
    expect([walked.status, walked.finalState]).toEqual(['finished', 'end']);
    const looped = await new Run({ sop, file, llm: new MockProvider({ walk: false }), maxTurns: 300 }).run();
    expect([looped.status, looped.turns]).toEqual(['max_turns', 300]);
  });
});
