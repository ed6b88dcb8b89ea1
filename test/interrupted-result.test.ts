// An interrupted top-level run does not print an intermediate state's finish result (the plan) as
// its `Result:`: only a run that finished has one.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOpenAiServer, type TestServer } from './helpers/openai-server.js';
import { requireBuiltCli, spawnCliAsync } from './helpers/cli.js';

const command = (name: string, args: Record<string, unknown>) => JSON.stringify({ command: name, command_args: args });

describe('the closing lines of an interrupted run', () => {
  let root: string;
  let server: TestServer;
  beforeAll(async () => {
    requireBuiltCli();
    root = mkdtempSync(join(tmpdir(), 'sop-interrupted-result-'));
    server = await startOpenAiServer({
      reply: (body) => {
        const asking = body.messages.some((m) => (m.content ?? '').includes('Ask the user.'));
        return asking ? command('ask_user', { question: 'Which file?' }) : command('finish', { result: '1. run' });
      },
    });
  });
  afterAll(async () => {
    await server?.close();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it('name no Result: when the run stops at a question after its plan state finished', async () => {
    const sop = {
      name: 'plan-then-ask',
      environment: { summary: { enabled: false } },
      agents: { Sam: { roles: { plan: 'Planner', ask: 'Asker' } } },
      root: 'plan',
      states: {
        plan: {
          roles: ['Planner'],
          components: { Planner: { task: 'Plan.' } },
          commands: { finish: { executor: 'finish' } },
          next_states: { '1': 'ask' },
        },
        ask: {
          roles: ['Asker'],
          components: { Asker: { task: 'Ask the user.' } },
          commands: { ask_user: { executor: 'human', settings: { kind: 'ask' } }, finish: { executor: 'finish' } },
          next_states: { '1': 'end' },
        },
        end: { final: true },
      },
    };
    const file = join(root, 'plan.sop.json');
    writeFileSync(file, JSON.stringify(sop));
    writeFileSync(join(root, 'answers.json'), '[]');
    const r = await spawnCliAsync(
      ['run', file, '--llm', 'openai', '--base-url', server.url, '--answers', join(root, 'answers.json'), '--out', join(root, 'runs')],
      { env: { ...process.env, OPENAI_API_KEY: 'test' }, timeout: 60_000 },
    );
    expect(r.status, r.stderr).toBe(3); // stopped for a person, resumable
    expect(r.stderr).toMatch(/Interrupted after 2 turns/);
    expect(r.stderr).not.toContain('Result: 1. run');
  });
});
