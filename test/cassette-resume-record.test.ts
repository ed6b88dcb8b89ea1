// `sop resume RUN --record FILE` continues the cassette the run was recording: a debate against
// an OpenAI-compatible server, recorded, stopped (SIGKILLed while a call is in flight, or at its
// turn limit) and resumed with --record, gives one cassette that replays the whole run, from
// its start, to the resumed run's transcript.
import { mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireBuiltCli, runCliKillable } from './helpers/cli.js';
import { goldenOf } from './helpers/golden.js';
import { startOpenAiServer, type ChatRequestBody, type TestServer } from './helpers/openai-server.js';

const DEBATE = join(import.meta.dirname, '..', 'examples', 'debate', 'debate.sop.json');
const ENV = { ...process.env, OPENAI_API_KEY: 'test-key', OPENAI_BASE_URL: undefined } as NodeJS.ProcessEnv;

/** Replies that differ from call to call, so a cassette out of step shows in the transcript. */
function debateReply(b: ChatRequestBody, i: number): string {
  const system = b.messages[0]?.content ?? '';
  if (/choose who speaks next/i.test(system)) return '<end>Negative</end>';
  if (/running summary/i.test(system)) return `Summary number ${i}.`;
  return `<decision>0</decision><end>0</end> Point number ${i}, briefly made.`;
}

const cli = (args: string[], onSpawn?: (kill: () => void) => void) => runCliKillable(args, ENV, onSpawn);

const onlyDir = (out: string) => join(out, readdirSync(out)[0]!);
const servers: TestServer[] = [];
let dir: string;
beforeAll(() => {
  requireBuiltCli();
  dir = mkdtempSync(join(tmpdir(), 'sop-resume-record-'));
});
afterAll(async () => {
  for (const s of servers) await s.close();
});

describe('resume --record', () => {
  for (const how of ['killed with a call in flight', 'stopped at --max-turns'] as const) {
    it(`${how}: the resumed recording replays the whole run to the same transcript`, async () => {
      const KILL_AT = 7;
      const killing = how === 'killed with a call in flight';
      let kill: (() => void) | undefined;
      const server = await startOpenAiServer({
        reply: debateReply,
        fault: (i) => (killing && i === KILL_AT ? { kind: 'delay', ms: 60_000 } : undefined),
        onRequest: (i) => {
          if (killing && i === KILL_AT) kill?.(); // readiness: the request reached the server
        },
      });
      servers.push(server);
      const base = join(dir, killing ? 'kill' : 'turns');
      const cassette = join(base, 'debate.cassette.json');
      const out = join(base, 'runs');
      const first = await cli(
        [
          'run',
          DEBATE,
          '--llm',
          'openai',
          '--base-url',
          server.url,
          '--max-turns',
          killing ? '6' : '3',
          '--quiet',
          '--out',
          out,
          '--record',
          cassette,
        ],
        (k) => (kill = k),
      );
      if (killing) expect(first.signal, first.stderr).toBe('SIGKILL');
      else expect(first.code, first.stderr).toBe(0);
      const before = (JSON.parse(readFileSync(cassette, 'utf8')) as { interactions: unknown[] }).interactions.length;
      expect(before).toBeGreaterThan(0);

      const runDir = onlyDir(out);
      const resumed = await cli(['resume', runDir, '--quiet', '--record', cassette, ...(killing ? [] : ['--max-turns', '6'])]);
      expect(resumed.code, resumed.stderr).toBe(0);
      const after = (JSON.parse(readFileSync(cassette, 'utf8')) as { interactions: unknown[] }).interactions.length;
      expect(after).toBeGreaterThan(before);

      const replayOut = join(base, 'replay');
      const replay = await cli(['run', DEBATE, '--llm', `replay:${cassette}`, '--max-turns', '6', '--quiet', '--out', replayOut]);
      expect(replay.code, replay.stderr).toBe(0);
      // the same transcript; only the header's LLM differs (record(openai), replay), and the
      // usage line by the call the kill lost (paid for, counted by the resume: usage.lost)
      const transcript = (d: string) =>
        goldenOf(d)
          .transcript.replace(/LLM: [^,]+, /, 'LLM: X, ')
          .replace(/LLM calls: .*/, 'LLM calls: N');
      expect(transcript(onlyDir(replayOut))).toBe(transcript(runDir));
      type U = { calls: number; prompt_tokens: number; completion_tokens: number; lost?: { calls: number; prompt_tokens: number } };
      const usage = (d: string) => JSON.parse(readFileSync(join(d, 'usage.json'), 'utf8')) as U;
      const live = usage(runDir);
      const replayed = usage(onlyDir(replayOut));
      expect(live.lost?.calls ?? 0).toBe(killing ? 1 : 0);
      expect(replayed.calls).toBe(live.calls - (live.lost?.calls ?? 0));
      expect(replayed.prompt_tokens).toBe(live.prompt_tokens - (live.lost?.prompt_tokens ?? 0));
      expect(replayed.completion_tokens).toBe(live.completion_tokens);
      expect(transcript(runDir)).toMatch(/Point number \d+/);
    }, 60_000);
  }
});
