// Audiences (docs/memory.md#audiences): who may see each message. The werewolf example runs from
// its hand-written cassette with --record, and no agent's recorded request holds a message (or a
// summary) kept from it; a few hundred generated SOPs with random groups, audiences, <to> tags,
// controllers, summaries and retrieval are checked the same way; the SOP's audience keys are
// validated; transcripts mark private messages and `sop view ?as=` shows one agent's view.
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RecordingProvider, runSop, validateSop, type ChatRequest, type LlmProvider, type Sop } from '../src/index.js';
import { startViewServer } from '../src/apps/view/server.js';
import { findLeaks } from './helpers/audience-leaks.js';
import { spawnCli, spawnCliAsync } from './helpers/cli.js';
import type { ExecResult } from './helpers/exec.js';
const tmp = mkdtempSync(join(tmpdir(), 'sop-audience-'));
const counts = { generated: 0, agentRequests: 0, restricted: 0, tokenChecks: 0, summaries: 0, leaks: 0 };

afterAll(() => {
  rmSync(tmp, { recursive: true, force: true });
  console.log(
    `audience leaks: ${counts.generated} generated SOPs, ${counts.agentRequests} agent requests, ${counts.restricted} restricted messages, ${counts.summaries} summaries, ${counts.tokenChecks} tokens checked, ${counts.leaks} leaks`,
  );
});

interface Line {
  id: number;
  sender: string;
  role: string;
  state: string;
  content: string;
  audience?: string[];
  to?: string;
  data?: Record<string, string>;
}

function transcript(dir: string): Line[] {
  return readFileSync(join(dir, 'transcript.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Line);
}

describe('werewolf example', () => {
  const out = join(tmp, 'werewolf');
  const rec = join(tmp, 'werewolf.rec.json');
  let r: ExecResult;
  beforeAll(async () => {
    r = await spawnCliAsync(
      [
        'run',
        'examples/werewolf/werewolf.sop.json',
        '--llm',
        'replay:examples/werewolf/werewolf.cassette.json',
        '--record',
        rec,
        '--out',
        out,
      ],
      { encoding: 'utf8', input: '', timeout: 120_000 },
    );
  });
  const dir = () => join(out, readdirSync(out)[0]!);

  it('runs to its end from the hand-written cassette: the villagers win', () => {
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toContain('Finished in state "villagers_win" after 25 turns');
    const c = JSON.parse(readFileSync('examples/werewolf/werewolf.cassette.json', 'utf8')) as { source: string; note: string };
    expect(c.source).toBe('hand-written');
    expect(c.note).toMatch(/not model output/);
  });

  it("no agent's recorded request holds a message or summary whose audience leaves it out", () => {
    const report = findLeaks(dir(), rec);
    expect(report.leaks).toEqual([]);
    expect(report.requests).toBe(21);
    expect(report.restricted).toBe(9);
    expect(report.checks).toBeGreaterThan(200);
  });

  it('private messages do reach their audience (the check above can see them)', () => {
    const calls = (
      JSON.parse(readFileSync(rec, 'utf8')) as {
        interactions: Array<{ agent?: string; state?: string; request: Array<{ content: string }> }>;
      }
    ).interactions;
    const asked = (agent: string, state: string) =>
      calls
        .filter((c) => c.agent === agent && c.state === state)
        .map((c) => c.request.map((m) => m.content).join('\n'))
        .join('\n');
    expect(asked('Cy', 'day1')).toContain('Ann is a werewolf.'); // her vision, addressed to her
    expect(asked('Bo', 'day1')).toContain("Let's take her tonight. <kill>Dee</kill>"); // the wolves' channel
    expect(asked('Mo', 'day1')).toContain('I want to see who she really is'); // the moderator sees all
    expect(asked('Fay', 'day1')).not.toContain('Ann is a werewolf.');
    expect(asked('Fay', 'day1')).toContain('Dee was found dead this morning'); // what the moderator announced
  });

  it("marks in each agent's own prompt what was private or addressed to it (sop show --prompts)", async () => {
    const prompts = async (agent: string) => {
      const shown = await spawnCliAsync(['show', dir(), '--prompts', '--agent', agent], { encoding: 'utf8', timeout: 60_000 });
      expect(shown.status, shown.stderr).toBe(0);
      return shown.stdout;
    };
    expect(await prompts('Cy')).toContain('Mo (Narrator) (to you): Ann is a werewolf.'); // the whisper to Cy
    expect(await prompts('Bo')).toContain("Ann (Wolf A) (to wolves): Dee watches everyone too closely. Let's take her tonight.");
    expect(await prompts('Mo')).toContain('Cy (Seer) (a private note): Ann smiled oddly at supper.');
    const fay = await prompts('Fay');
    expect(fay).toContain('Mo (Narrator): Dawn breaks over Thornbury.'); // public: no mark
    expect(fay).not.toMatch(/\((to \w+|a private note)\):/);
  });

  it('records audiences as lists of names, <to> addressing and output tags as data', () => {
    const lines = transcript(dir());
    const everyone = ['Mo', 'Ann', 'Bo', 'Cy', 'Dee', 'Eli', 'Fay'];
    for (const m of lines) expect(Array.isArray(m.audience)).toBe(true);
    const kill = lines.find((m) => m.sender === 'Ann' && m.state === 'night1')!;
    expect(kill).toMatchObject({ audience: ['Mo', 'Ann', 'Bo'], to: 'wolves', data: { kill: 'Dee' } });
    const vision = lines.find((m) => m.sender === 'Mo' && m.state === 'vision1' && m.content.includes('werewolf'))!;
    expect(vision).toMatchObject({ content: 'Ann is a werewolf.', audience: ['Mo', 'Cy'], to: 'Cy' });
    expect(lines.find((m) => m.sender === 'Cy' && m.state === 'vision1' && m.role === 'Seer' && m.data)).toMatchObject({
      audience: ['Mo', 'Cy'],
      to: 'self',
      data: { look: 'Ann' },
    });
    const votes = lines.filter((m) => m.state === 'day1' && m.data?.vote).map((m) => `${m.sender}:${m.data!.vote}`);
    expect(votes).toEqual(['Cy:Ann', 'Ann:Cy', 'Eli:Ann', 'Bo:Cy', 'Fay:Ann']);
    expect(lines.filter((m) => m.data?.banished).map((m) => m.data!.banished)).toEqual(['Ann', 'Bo']);
    expect(lines.find((m) => m.state === 'day1' && m.sender === 'Dee')!.audience).toEqual(everyone);
    const md = readFileSync(join(dir(), 'transcript.md'), 'utf8');
    expect(md).toContain('**Ann** (Wolf A), turn 2 [to wolves]:');
    expect(md).toContain('**Mo** (Narrator), turn 6 [to Cy]:');
    expect(md).toContain('**Cy** (Seer), turn 5 [to self]:');
    expect(md).toMatch(/> Summary \[for Ann, Bo\] after 10 messages: At night we, the werewolves/);
    expect(md).toMatch(/> Summary \[for Dee, Eli, Fay\] after 10 messages: Night fell/);
    expect(r.stdout).toContain('Bo (Wolf B) [to wolves]:');
  });

  it('sop view ?as=NAME shows the transcript as that agent sees it', async () => {
    const server = await startViewServer({ runs: () => [{ id: readdirSync(out)[0]!, dir: dir() }] });
    try {
      const page = async (as?: string) => {
        const res = await fetch(server.runUrl(readdirSync(out)[0]!) + (as ? `&as=${as}` : ''));
        return res.text();
      };
      const all = await page();
      const fay = await page('Fay');
      const cy = await page('Cy');
      expect(all).toContain('class="inspector"');
      expect(all).toContain('Ann is a werewolf.');
      expect(all).toContain('[to wolves]');
      expect(fay).not.toContain('Ann is a werewolf.');
      expect(fay).not.toContain('[to wolves]');
      expect(fay).not.toContain('class="inspector"'); // other agents' prompts are not shown in an agent's view
      expect(fay).toContain('Dee was found dead this morning');
      expect(cy).toContain('Ann is a werewolf.');
      expect(cy).not.toContain('Let&#39;s take her tonight');
      expect(all).toContain('Let&#39;s take her tonight');
      // where a message is hidden from the agent, a line says so (never what it said)
      expect(fay).toContain('<p class="hidden-msg">a message Fay may not see (turn 2)</p>');
      expect(all).not.toContain('may not see');
    } finally {
      await server.close();
    }
  });

  it("sop view RUN_DIR --as NAME prints the URL of that agent's view", async () => {
    const child = spawnCli(['view', dir(), '--no-open', '--as', 'Fay'], { stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout.on('data', (d: Buffer) => {
          out += d.toString();
          if (out.includes('\n')) resolve(out.split('\n')[0]!);
        });
        child.once('exit', (code) => reject(new Error(`sop view exited with ${code}`)));
      });
      expect(url).toMatch(/&as=Fay$/);
      const html = await (await fetch(url)).text();
      expect(html).toContain('Dee was found dead this morning');
      expect(html).not.toContain('Ann is a werewolf.');
    } finally {
      child.kill();
    }
  });
});

describe('resume', () => {
  it('a werewolf run stopped at turn 12 (after the per-audience summaries) and resumed gives the same transcript and prompts', async () => {
    const out = join(tmp, 'werewolf-resume');
    const args = ['examples/werewolf/werewolf.sop.json', '--llm', 'replay:examples/werewolf/werewolf.cassette.json', '--out', out];
    const first = await spawnCliAsync(['run', ...args, '--max-turns', '12', '--quiet'], { encoding: 'utf8', input: '' });
    expect(first.stderr).toContain('Stopped after --max-turns 12 turns');
    const dir = join(out, readdirSync(out)[0]!);
    const resumed = await spawnCliAsync(['resume', dir, '--max-turns', '200', '--quiet'], { encoding: 'utf8', input: '' });
    expect(resumed.stderr).toContain('Finished in state "villagers_win" after 25 turns');
    const whole = join(tmp, 'werewolf', readdirSync(join(tmp, 'werewolf'))[0]!);
    const plain = (d: string) => readFileSync(join(d, 'transcript.jsonl'), 'utf8').replace(/"timestamp":"[^"]*"/g, '');
    expect(plain(dir)).toBe(plain(whole));
    const usage = (d: string) => (JSON.parse(readFileSync(join(d, 'usage.json'), 'utf8')) as { prompt_tokens: number }).prompt_tokens;
    expect(usage(dir)).toBe(usage(whole)); // the same prompts: the summaries kept per audience were restored
  });
});

describe('<to> and data tags with an output tag', () => {
  it('keeps the <to> and data tags of a reply whose role records only its output tag', async () => {
    const sop = {
      name: 'tags',
      groups: { pair: ['Ann', 'Bo'] },
      agents: { Ann: { roles: { s: 'A' } }, Bo: { roles: { s: 'B' } }, Cy: { roles: { s: 'C' } } },
      root: 's',
      states: {
        s: {
          roles: ['A', 'B', 'C'],
          components: { A: { output: 'answer' }, B: { output: 'vote' } },
          audience: { A: { to: 'all', address: true, data: ['vote'] }, B: { to: 'pair', data: ['vote'] } },
          controller: { type: 'order', max_turns: 3 },
          next_states: { '0': 's', '1': 'end' },
        },
        end: { final: true },
      },
    } as unknown as Sop;
    const replies = ['<to>Bo</to> <answer>hello Bo</answer> <vote>Cy</vote>', 'I pick <vote>Ann</vote>, sorry', 'hi <to>Ann</to>'];
    const warnings: string[] = [];
    const run = runSop(sop, {
      llm: {
        id: 'list',
        chat: async (r: ChatRequest) => ({
          content: r.meta.purpose === 'agent' ? replies.shift()! : '<end>0</end>',
          usage: { promptTokens: 1, completionTokens: 1 },
        }),
      },
      maxTurns: 3,
      listeners: [(e) => e.type === 'warning' && warnings.push(e.message)],
    });
    const { messages } = await run.result;
    expect(messages.map((m) => ({ content: m.content, audience: m.audience, to: m.to, data: m.data }))).toEqual([
      { content: '<vote>Cy</vote> hello Bo', audience: ['Ann', 'Bo'], to: 'Bo', data: { vote: 'Cy' } },
      { content: 'Ann', audience: ['Ann', 'Bo'], to: 'pair', data: { vote: 'Ann' } },
      { content: 'hi <to>Ann</to>', audience: ['Ann', 'Bo', 'Cy'], to: undefined, data: undefined }, // C may not address
    ]);
    expect(warnings).toEqual([]);
  });
});

// --- generated SOPs ---------------------------------------------------------------------------

/** A small deterministic generator for the provider's choices (the SOP comes from fast-check). */
function lcg(seed: number) {
  let s = seed >>> 0 || 1;
  return (n: number) => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s % n;
  };
}

const TOKEN = /tok(\d+)/g;

/**
 * Agents reply with a fresh token (sometimes with a <to> tag, sometimes naming no one known);
 * the summariser echoes every token it was shown, so a private message that reached a summary
 * shows up in the prompts of whoever is shown that summary; judges and speaker choices pick at random.
 */
function tokenProvider(seed: number, names: string[]): LlmProvider {
  const rnd = lcg(seed);
  let next = 0;
  return {
    id: 'tokens',
    async chat(request: ChatRequest) {
      const text = request.messages.map((m) => (typeof m.content === 'string' ? m.content : '')).join('\n');
      const meta = request.meta;
      let content: string;
      if (meta.purpose === 'summary') content = `summary of ${[...new Set(text.match(TOKEN) ?? [])].join(' ')}`;
      else if (meta.purpose === 'judge') content = `<end>${meta.judgeKeys?.[rnd(meta.judgeKeys.length)] ?? '0'}</end>`;
      else if (meta.purpose === 'speaker') content = `<end>${meta.candidates?.[rnd(meta.candidates.length)] ?? ''}</end>`;
      else {
        content = `tok${next++}`;
        const pick = rnd(6);
        if (pick === 0) content = `<to>${names[rnd(names.length)]}</to> ${content}`;
        if (pick === 1) content = `${content} <to>nobody_known</to>`;
        if (pick === 2) content += ` <vote>${names[rnd(names.length)]}</vote>`;
      }
      return { content, usage: { promptTokens: 1, completionTokens: 1 } };
    },
  };
}

const arbSop = fc
  .record({
    nAgents: fc.integer({ min: 2, max: 5 }),
    nStates: fc.integer({ min: 1, max: 3 }),
    type: fc.constantFrom('cooperative' as const, 'competitive' as const),
    window: fc.integer({ min: 1, max: 5 }),
    topK: fc.integer({ min: 0, max: 3 }),
    every: fc.integer({ min: 1, max: 4 }),
    summary: fc.boolean(),
    seed: fc.integer({ min: 1, max: 2 ** 30 }),
    groupBits: fc.array(fc.integer({ min: 1, max: 31 }), { minLength: 0, maxLength: 2 }),
    picks: fc.array(fc.integer({ min: 0, max: 1000 }), { minLength: 80, maxLength: 80 }),
  })
  .map((g) => {
    let p = 0;
    const pick = (n: number) => g.picks[p++ % g.picks.length]! % n;
    const agents = Array.from({ length: g.nAgents }, (_, i) => `A${i}`);
    const groups: Record<string, string[]> = {};
    g.groupBits.forEach((bits, i) => {
      const members = agents.filter((_, k) => bits & (1 << k));
      if (members.length > 0) groups[`g${i}`] = members;
    });
    const targets = ['all', 'self', ...Object.keys(groups), ...agents];
    const agentDefs: Record<string, { roles: Record<string, string> }> = Object.fromEntries(agents.map((a) => [a, { roles: {} }]));
    const states: Record<string, unknown> = {};
    for (let s = 0; s < g.nStates; s++) {
      const name = `s${s}`;
      const players = agents.filter((_, k) => k === s % agents.length || pick(3) > 0);
      const roles = players.map((a) => `R${a}`);
      for (const a of players) agentDefs[a]!.roles[name] = `R${a}`;
      const audience: Record<string, object> = {};
      for (const role of roles) {
        const kind = pick(6);
        if (kind === 0) continue; // the environment type's default
        audience[role] = {
          to: targets[pick(targets.length)],
          ...(pick(3) === 0 ? { address: true } : {}),
          ...(pick(12) === 0 ? { sees: 'all' } : {}),
          ...(pick(3) === 0 ? { data: ['vote'] } : {}),
        };
      }
      const sees = [undefined, undefined, 'all', 'roles', agents[pick(agents.length)]][pick(5)];
      states[name] = {
        environment_prompt: `state ${name}`,
        roles,
        ...(pick(3) === 0 ? { begin_query: `open ${name}` } : {}),
        audience,
        controller: { type: (['order', 'random', 'rule'] as const)[pick(3)], max_turns: 2 + pick(5), ...(sees ? { sees } : {}) },
        next_states: { '1': s + 1 < g.nStates ? `s${s + 1}` : 'end', ...(pick(2) === 0 ? { '2': 's0' } : {}) },
      };
    }
    states.end = { final: true };
    const sop = {
      name: 'generated',
      environment: {
        type: g.type,
        max_chat_history: g.window,
        top_k: g.topK,
        summary: { enabled: g.summary, every: g.every },
      },
      groups,
      agents: agentDefs,
      root: 's0',
      states,
    } as unknown as Sop;
    return { sop, seed: g.seed, names: [...agents, ...Object.keys(groups), 'all'] };
  });

describe('generated SOPs', () => {
  it('no agent request ever holds a token of a message (or of a summary of one) its audience leaves it out of', async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(arbSop, async ({ sop, seed, names }) => {
        const problems = validateSop(sop).errors;
        if (problems.length > 0) throw new Error(`generated SOP invalid: ${problems.map((d) => `${d.pointer} ${d.message}`).join('; ')}`);
        const where = join(tmp, `g${n++}`);
        const rec = `${where}.rec.json`;
        const run = runSop(sop, {
          llm: new RecordingProvider(tokenProvider(seed, names), rec),
          out: where,
          maxTurns: 40,
          stream: false,
        });
        const result = await run.result;
        if (result.status === 'failed') throw new Error(`run failed: ${result.error?.message}`);
        const dir = join(where, readdirSync(where)[0]!);
        const lines = transcript(dir);
        const byToken = new Map<string, Line>();
        for (const m of lines) for (const t of m.content.match(TOKEN) ?? []) byToken.set(t, m);
        const calls = (
          JSON.parse(readFileSync(rec, 'utf8')) as {
            interactions: Array<{ purpose: string; agent?: string; request: Array<{ content: string }> }>;
          }
        ).interactions;
        counts.generated++;
        counts.restricted += lines.filter((m) => m.to !== undefined).length;
        counts.summaries += readFileSync(join(dir, 'journal.jsonl'), 'utf8').split('"type":"summary"').length - 1;
        for (const c of calls) {
          if (c.purpose !== 'agent' || c.agent === undefined) continue;
          counts.agentRequests++;
          const text = c.request.map((m) => m.content).join('\n');
          for (const t of new Set(text.match(TOKEN) ?? [])) {
            counts.tokenChecks++;
            const m = byToken.get(t);
            if (!m) continue; // a token of a reply being retried is never recorded
            if (m.audience && !m.audience.includes(c.agent)) {
              counts.leaks++;
              throw new Error(`${c.agent} was shown ${t} (message ${m.id}, audience ${m.audience.join(', ')}) in ${JSON.stringify(sop)}`);
            }
          }
        }
        rmSync(where, { recursive: true, force: true });
        rmSync(rec, { force: true });
      }),
      { numRuns: 300, seed: 16 },
    );
    expect(counts.generated).toBe(300);
    expect(counts.restricted).toBeGreaterThan(300);
    expect(counts.summaries).toBeGreaterThan(100);
  }, 300_000);
});

describe('the check itself', () => {
  it('finds a leak when a transcript says a message was kept from an agent that was shown it', () => {
    const dir = join(tmp, 'werewolf', readdirSync(join(tmp, 'werewolf'))[0]!);
    const fake = join(tmp, 'fake-run');
    rmSync(fake, { recursive: true, force: true });
    cpSync(dir, fake, { recursive: true });
    const lines = transcript(fake).map((m) =>
      m.content.startsWith('Dawn breaks over Thornbury') ? { ...m, audience: ['Mo', 'Ann', 'Bo', 'Cy', 'Dee', 'Eli'] } : m,
    );
    writeFileSync(join(fake, 'transcript.jsonl'), lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
    const report = findLeaks(fake, join(tmp, 'werewolf.rec.json'));
    expect(report.leaks.length).toBeGreaterThan(0);
    expect(report.leaks[0]).toMatch(/^Fay's request holds message 6/);
  });
});

describe('validation of audiences', () => {
  const base = JSON.parse(readFileSync('examples/werewolf/werewolf.sop.json', 'utf8')) as Record<string, any>;
  const errors = (mutate: (s: Record<string, any>) => void) => {
    const s = structuredClone(base);
    mutate(s);
    return validateSop(s as Sop).errors.map((d) => `${d.pointer}: ${d.message}`);
  };
  it('accepts the werewolf SOP', () => {
    expect(errors(() => {})).toEqual([]);
  });
  it('names unknown group members, addressees, roles and controller viewers', () => {
    expect(errors((s) => (s.groups.wolves = ['Ann', 'Zed']))).toEqual([
      '/groups/wolves/1: group "wolves" names "Zed", which is not an agent (agents: Mo, Ann, Bo, Cy, Dee, Eli, Fay)',
    ]);
    expect(errors((s) => (s.states.night1.audience['Wolf A'].to = 'wolfs'))).toEqual([
      '/states/night1/audience/Wolf A/to: "wolfs" is not all, self, a group or an agent (groups: wolves, seer)',
    ]);
    expect(errors((s) => (s.states.night1.audience.Seer = { to: 'self' }))).toEqual([
      '/states/night1/audience/Seer: "Seer" is not a role of state "night1" (roles: Narrator, Wolf A, Wolf B)',
    ]);
    expect(errors((s) => (s.states.day1.controller.sees = 'everyone'))).toEqual([
      '/states/day1/controller/sees: controller.sees is "roles", "all" or an agent\'s name, not "everyone"',
    ]);
    expect(errors((s) => (s.states.day1.audience.Narrator.sees = 'some'))[0]).toMatch(/^\/states\/day1\/audience\/Narrator\/sees/);
    expect(errors((s) => (s.agents_v1 = {}))).toEqual([
      '/agents_v1: audiences (groups, states.X.audience, controller.sees) do not apply to Agents 1.0 imports',
    ]);
  });
});
