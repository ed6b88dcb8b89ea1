// A run stops when code needs approval and there is no terminal to ask (the code never ran).
// Its resume with --auto-run must run the code as new, not warn that it "may have run": the
// journal records that the effect it had marked as started did not take place.
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from './helpers/cli.js';
import { codeSop } from './helpers/code-sop.js';
import { shownText, startOpenAiServer, type TestServer } from './helpers/openai-server.js';

let root: string;
let server: TestServer;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'sop-approval-resume-'));
  server = await startOpenAiServer({
    reply: (body) =>
      shownText(body, 'ran.txt written')
        ? JSON.stringify({ command: 'finish', command_args: { result: 'done' } })
        : JSON.stringify({ command: 'run_code', command_args: { code: 'open("ran.txt", "w").write("yes")\nprint("ran.txt written")' } }),
  });
});
afterAll(async () => {
  await server.close();
  rmSync(root, { recursive: true, force: true });
});

describe('a run stopped for an approval nobody could give', () => {
  it('resumes with --auto-run as if the code had never been started', async () => {
    const file = join(root, 'approve.sop.json');
    writeFileSync(file, JSON.stringify(codeSop('approve')));
    const out = join(root, 'runs');
    const first = await runCli(['run', file, '--llm', 'openai', '--base-url', server.url, '--no-sandbox', '--out', out]);
    expect(first.status, first.stderr).toBe(3); // stopped for a person (130 is Ctrl-C)
    expect(first.stderr).toMatch(/--auto-run/);
    const dir = join(out, readdirSync(out)[0]!);
    expect(existsSync(join(dir, 'workspace', 'ran.txt'))).toBe(false);
    const events = readFileSync(join(dir, 'journal.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; key?: string; kind?: string });
    const started = events.filter((e) => e.type === 'effect_started' && e.kind === 'code');
    const cancelled = events.filter((e) => e.type === 'effect_cancelled');
    expect(started).toHaveLength(1);
    expect(cancelled).toEqual([expect.objectContaining({ key: started[0]!.key, kind: 'code' })]);

    const resumed = await runCli(['resume', dir, '--auto-run']);
    expect(resumed.status, resumed.stderr).toBe(0);
    expect(resumed.stderr).not.toMatch(/may have run/);
    expect(readFileSync(join(dir, 'workspace', 'ran.txt'), 'utf8')).toBe('yes');
  }, 60_000);
});
