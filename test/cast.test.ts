// Issue 27 item 8: a state can cast its roles (role -> agent) instead of every agent repeating
// `roles`. The debate example written with casts runs as the example does, and a cast that names
// no agent, no role of the state, or contradicts an agent's roles is refused at its pointer.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadSop, runSop, validateSop, type Sop } from '../src/index.js';

const FILE = 'examples/debate/debate.sop.json';
const CASSETTE = 'replay:examples/debate/debate.cassette.json';

/** The debate example with each state's roles cast there, and no agent listing its roles. */
function castDebate(): Record<string, unknown> {
  const doc = JSON.parse(readFileSync(FILE, 'utf8')) as {
    agents: Record<string, { roles?: Record<string, string> }>;
    states: Record<string, Record<string, unknown>>;
  };
  for (const [agent, def] of Object.entries(doc.agents)) {
    for (const [state, role] of Object.entries(def.roles ?? {})) ((doc.states[state]!.cast ??= {}) as Record<string, string>)[role] = agent;
    delete def.roles;
  }
  return doc;
}

const said = async (sop: Sop) => (await runSop(sop, { llm: CASSETTE }).result).messages.map((m) => `${m.sender} (${m.role}): ${m.content}`);

describe('states.X.cast', () => {
  it('casts roles as agents.A.roles does: the debate written with casts replays as the example', async () => {
    const doc = castDebate();
    expect(JSON.stringify(doc.agents as object)).not.toContain('"roles"');
    const cast = loadSop(doc, { file: FILE });
    expect(cast.agents.Ada!.roles).toEqual(loadSop(FILE).agents.Ada!.roles);
    const reference = await said(loadSop(FILE));
    expect(reference.length).toBeGreaterThan(10);
    expect(await said(cast)).toEqual(reference);
  });

  it('may repeat what an agent says, and refuses what contradicts it or names nothing', () => {
    const doc = castDebate() as {
      agents: Record<string, { roles?: Record<string, string> }>;
      states: Record<string, { cast?: Record<string, string> }>;
    };
    doc.agents.Ada!.roles = { opening: 'Affirmative' }; // the same as the cast: fine
    expect(validateSop(doc).errors).toEqual([]);
    doc.agents.Ada!.roles = { opening: 'Negative' };
    doc.states.verdict!.cast!.Judge = 'Ruth';
    doc.states.opening!.cast!.Nobody = 'Ben';
    const errors = validateSop(doc).errors.map((e) => `${e.pointer}: ${e.message}`);
    expect(errors).toEqual([
      '/states/opening/cast/Affirmative: Ada plays "Negative" in state "opening" by agents.Ada.roles, and the cast says "Affirmative"',
      expect.stringMatching(/^\/states\/opening\/cast\/Nobody: "Nobody" is not a role of state "opening" \(its roles: .*\)$/),
      expect.stringMatching(
        /^\/states\/verdict\/cast\/Judge: "Ruth" is not an agent of this SOP \(agents: Ada, Ben, Chloe, Dev, Judge Ruth\)$/,
      ),
    ]);
  });
});
