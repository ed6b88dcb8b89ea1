// A cassette of a population run, and a run SIGKILLed in the middle of a population step: the
// step's calls are made at once, each under its own effect key (step and agent), and those that
// finished before the kill are reused from the journal on resume. Resumed with `--llm replay:`
// the recorded cassette, or resumed with `--record` (the cassette it was recording, continued),
// every agent gets its own reply: the steps equal an uninterrupted run's.
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writePopulationSop, inMessages } from './helpers/population-sop.js';
import { requireBuiltCli, runCliKillable } from './helpers/cli.js';
import { startOpenAiServer, type ChatRequestBody, type TestServer } from './helpers/openai-server.js';

const ENV = { ...process.env, OPENAI_API_KEY: 'test-key', OPENAI_BASE_URL: undefined } as NodeJS.ProcessEnv;
const AGENTS = 24;
const servers: TestServer[] = [];
let dir: string;
let sopFile: string;
/** The population steps of an uninterrupted run. */
let reference: Line[];

/** Each agent posts a line with its name (read from its persona) and the step, so a reply given to another agent shows. */
function reply(b: ChatRequestBody): string {
  const name = inMessages(b.messages, /You are (\w+)\./) ?? 'someone';
  const step = /\b(\d\d:\d\d)\b/.exec(b.messages.map((m) => m.content).join('\n'))?.[1] ?? '?';
  return JSON.stringify({ command: 'post', command_args: { text: `${name} says hello at ${step}` } });
}

const cli = (args: string[], onSpawn?: (kill: () => void) => void) => runCliKillable(args, ENV, onSpawn);

type Action = { agent: string; name: string; args: { text?: string } };
type Line = { type: string; turn?: number; step?: number; metrics?: unknown; actions?: Action[]; effect?: string; agent?: string };
const journal = (runDir: string): Line[] =>
  readFileSync(join(runDir, 'journal.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Line);
const steps = (runDir: string) => journal(runDir).filter((l) => l.type === 'population_step');
const onlyDir = (out: string) => join(out, readdirSync(out)[0]!);
const names = new Map<string, string>();

/** Each post names the agent that made it. */
function ownReplies(lines: Line[]): void {
  for (const s of lines)
    for (const a of s.actions ?? [])
      if (a.name === 'post') expect(a.args.text, `${a.agent}`).toMatch(new RegExp(`^${names.get(a.agent)} says`));
}

/** A run against the server, SIGKILLed when the 12th request of step 2 reaches it. */
async function killedRun(out: string, extra: string[]): Promise<string> {
  const KILL_AT = AGENTS + 11;
  let kill: (() => void) | undefined;
  const server = await startOpenAiServer({ reply, latencyMs: 100, onRequest: (i) => i === KILL_AT && kill?.() });
  servers.push(server);
  const first = await cli(
    ['run', sopFile, '--llm', 'openai', '--base-url', server.url, '--concurrency', '4', '--out', out, '--quiet', ...extra],
    (k) => (kill = k),
  );
  expect(first.signal, first.stderr).toBe('SIGKILL');
  const runDir = onlyDir(out);
  const before = journal(runDir);
  expect(before.filter((l) => l.type === 'population_step').map((l) => l.step)).toEqual([1]);
  const done = before.filter((l) => l.type === 'llm_call' && l.turn === 2).length;
  expect(done).toBeGreaterThan(0);
  expect(done).toBeLessThan(AGENTS);
  return runDir;
}

beforeAll(async () => {
  requireBuiltCli();
  dir = mkdtempSync(join(tmpdir(), 'sop-population-cassette-'));
  sopFile = writePopulationSop(dir, { agents: AGENTS, steps: 3 });
  for (const line of readFileSync(join(dir, 'personas.csv'), 'utf8').trim().split('\n').slice(1)) {
    const [id, name] = line.split(',');
    names.set(id!, name!);
  }
  // the uninterrupted run, recorded
  const server = await startOpenAiServer({ reply, latencyMs: 20 });
  servers.push(server);
  const whole = await cli([
    'run',
    sopFile,
    '--llm',
    'openai',
    '--base-url',
    server.url,
    '--concurrency',
    '4',
    '--record',
    join(dir, 'whole.cassette.json'),
    '--out',
    join(dir, 'whole'),
    '--quiet',
  ]);
  expect(whole.code, whole.stderr).toBe(0);
  reference = steps(onlyDir(join(dir, 'whole')));
  expect(reference).toHaveLength(3);
  expect(reference.flatMap((l) => l.actions ?? []).filter((a) => a.name === 'post')).toHaveLength(3 * AGENTS);
  ownReplies(reference);
}, 60_000);
afterAll(async () => {
  for (const s of servers) await s.close();
  rmSync(dir, { recursive: true, force: true });
});

const same = (lines: Line[]) => lines.map((l) => [l.step, l.metrics, l.actions]);

describe('a population step killed half-way, with a cassette', () => {
  it('resumed with --llm replay: the recorded cassette, every agent gets its own reply', async () => {
    const runDir = await killedRun(join(dir, 'killed-replay'), ['--record', join(dir, 'killed.cassette.json')]);
    const resumed = await cli(['resume', runDir, '--llm', `replay:${join(dir, 'whole.cassette.json')}`, '--quiet']);
    expect(resumed.code, resumed.stderr).toBe(0);
    const after = steps(runDir).slice(-3);
    ownReplies(after);
    expect(same(after)).toEqual(same(reference));
  });

  it('resumed with --record (the cassette it was recording), the cassette replays the whole run', async () => {
    const cassette = join(dir, 'continued.cassette.json');
    const runDir = await killedRun(join(dir, 'killed-record'), ['--record', cassette]);
    const server = await startOpenAiServer({ reply, latencyMs: 20 });
    servers.push(server);
    const resumed = await cli(['resume', runDir, '--base-url', server.url, '--record', cassette, '--quiet']);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(same(steps(runDir).slice(-3))).toEqual(same(reference));
    const out = join(dir, 'replayed');
    const replayed = await cli(['run', sopFile, '--llm', `replay:${cassette}`, '--concurrency', '4', '--out', out, '--quiet']);
    expect(replayed.code, replayed.stderr).toBe(0);
    // the calls of the steps are recorded with their effect keys, each once
    const keys = (JSON.parse(readFileSync(cassette, 'utf8')) as { interactions: Array<{ effect?: string }> }).interactions.map(
      (i) => i.effect,
    );
    expect(keys).toHaveLength(3 * AGENTS);
    expect(new Set(keys).size).toBe(3 * AGENTS);
    const again = steps(onlyDir(out));
    ownReplies(again);
    expect(same(again)).toEqual(same(reference));
  });
});
