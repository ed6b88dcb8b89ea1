// Commands contributed, not owned (issue 39): a feature adds executors a SOP's commands may name
// (the commandExecutors hook) and commands of its own to a state at its first turn (stateCommands),
// as the scientist and MCP do; a program's plugin can do the same through sop/extend. The LLM is a
// scripted provider: it issues the commands a test needs, in order.
import { describe, expect, it } from 'vitest';
import { runSop, type Sop } from '../src/index.js';
import { definePlugin, type CommandSpec, type Executor, type RunContext, type RunPlugin } from '../src/extend.js';
import type { ChatRequest, LlmProvider } from '../src/core/llm/types.js';
import type { RunEvent } from '../src/core/runtime/events.js';
import { BUILTIN_EXECUTORS } from '../src/api/loader/executors.js';
import { SCIENTIST_EXECUTORS } from '../src/features/scientist/executors/index.js';
import { ACTION_EXECUTORS } from '../src/features/actions/executors/registry.js';

/** An LLM that answers with the given replies, one per call, and remembers the prompts it was sent. */
function scripted(replies: string[]): LlmProvider & { requests: ChatRequest[] } {
  const requests: ChatRequest[] = [];
  return {
    id: 'scripted',
    requests,
    async chat(request) {
      requests.push(request);
      const content = replies[requests.length - 1] ?? '{"command": "finish", "command_args": {"result": "out of replies"}}';
      return { content, usage: { promptTokens: 1, completionTokens: 1 } };
    },
  };
}

const clock: Executor = {
  name: 'clock',
  description: 'Tell the time of the test clock.',
  settings: { type: 'object', additionalProperties: false, properties: { zone: { type: 'string' } } },
  args: () => ({}),
  async run(_args, ctx) {
    const zone = typeof ctx.settings.zone === 'string' ? ctx.settings.zone : 'UTC';
    return { ok: true, result: `It is 12:00 ${zone}.`, summary: `time: 12:00 ${zone}` };
  },
};

function sop(commands: Record<string, unknown>): Sop {
  return {
    name: 'hooks',
    environment: { summary: { enabled: false } },
    agents: { Ann: { roles: { work: 'Worker' } } },
    root: 'work',
    states: {
      work: { roles: ['Worker'], commands: { ...commands, finish: { executor: 'finish' } }, next_states: { 1: 'end' } },
      end: { final: true },
    },
  };
}

async function run(s: Sop, llm: LlmProvider, plugin?: (ctx: RunContext) => RunPlugin | undefined) {
  const events: RunEvent[] = [];
  const handle = runSop(s, {
    llm,
    file: 'hooks.sop.json',
    listeners: [(e) => events.push(e)],
    plugins: (ctx) => (plugin ? [plugin(ctx)!] : []),
  });
  return { result: await handle.result, events };
}

describe('a feature contributes executors (commandExecutors)', () => {
  it("a plugin's executor runs the command that names it, with the command's settings", async () => {
    const plugin = definePlugin<RunPlugin>({ name: 'clock', make: () => ({ commandExecutors: (given) => ({ ...given, clock }) }) });
    const llm = scripted(['{"command": "time", "command_args": {}}', '{"command": "finish", "command_args": {"result": "done"}}']);
    const { result, events } = await run(sop({ time: { executor: 'clock', settings: { zone: 'CET' } } }), llm, plugin);
    expect(result.status).toBe('finished');
    expect(result.result).toBe('done');
    const done = events.find((e) => e.type === 'executor_result' && e.command === 'time');
    expect(done).toMatchObject({ executor: 'clock', ok: true, result: 'It is 12:00 CET.' });
  });

  it('without the plugin, a command naming its executor stops the run before it starts, in one line naming the executors there are', async () => {
    const llm = scripted([]);
    const err = await run(sop({ time: { executor: 'clock' } }), llm).catch((e: unknown) => e as Error);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toBe(
      'hooks.sop.json: /states/work/commands/time/executor: unknown executor "clock"; known executors: code, memory, library, human, sop, finish',
    );
    expect(llm.requests).toHaveLength(0); // no agent was asked anything
  });

  it("the loader checks commands against every built-in feature's executors: the actions' and the scientist's", () => {
    expect(Object.keys(BUILTIN_EXECUTORS)).toEqual([...ACTION_EXECUTORS, ...SCIENTIST_EXECUTORS].map((e) => e.name));
    expect(Object.keys(BUILTIN_EXECUTORS)).toEqual(
      expect.arrayContaining(['code', 'memory', 'finish', 'task_board', 'world_model', 'knowledge']),
    );
  });
});

describe('a feature adds commands to a state (stateCommands)', () => {
  it("the state's agents are offered the added command at its first turn, and it runs like a declared one", async () => {
    let asked = 0;
    const plugin = definePlugin<RunPlugin>({
      name: 'extra',
      make: () => ({
        stateCommands: (commands: Record<string, CommandSpec>, state) => {
          asked++;
          const spec: CommandSpec = { name: 'now', executor: clock, description: clock.description, settings: {}, args: {} };
          return state.name === 'work' ? { now: spec, ...commands } : commands;
        },
      }),
    });
    const llm = scripted(['{"command": "now", "command_args": {}}', '{"command": "finish", "command_args": {"result": "ok"}}']);
    const { result, events } = await run(sop({}), llm, plugin);
    expect(result.status).toBe('finished');
    expect(asked).toBe(1); // once per state, at its first turn
    expect(events.find((e) => e.type === 'executor_result' && e.command === 'now')).toMatchObject({ result: 'It is 12:00 UTC.' });
    const prompt = JSON.stringify(llm.requests[0]!.messages);
    expect(prompt).toContain('now');
    expect(prompt).toContain('Tell the time of the test clock.');
  });
});
