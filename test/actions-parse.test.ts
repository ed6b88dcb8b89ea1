// Reading a command out of an agent's reply, and checking it against the state's commands.
import { describe, expect, it } from 'vitest';
import { parseCommandReply } from '../src/core/llm/command-reply.js';
import { checkCommand, compileCommands, commandDiagnostics } from '../src/core/commands/commands.js';
import { BUILTIN_EXECUTORS } from '../src/api/loader/executors.js';
import type { Sop, SopState } from '../src/format/sop/types.js';

const ok = (command: string, args: Record<string, unknown>) => ({ ok: true, command, args });

describe('parseCommandReply', () => {
  it('reads a bare JSON command', () => {
    expect(parseCommandReply('{"command": "run_code", "command_args": {"code": "print(1)"}}')).toEqual(
      ok('run_code', { code: 'print(1)' }),
    );
  });

  it('reads a command in a ```json fence with prose around it', () => {
    const reply =
      'Sure, I will update the plan now.\n\n```json\n{\n  "command": "update_plan",\n  "command_args": {"content": "1. [done] a"}\n}\n```\nThat marks step 1.';
    expect(parseCommandReply(reply)).toEqual(ok('update_plan', { content: '1. [done] a' }));
  });

  it('reads a command from prose with no fence, ignoring braces in the prose before it', () => {
    const reply = 'I considered {a, b} first. Then: {"command": "ask_user", "command_args": {"question": "Which {file}?"}} -- done.';
    expect(parseCommandReply(reply)).toEqual(ok('ask_user', { question: 'Which {file}?' }));
  });

  it('repairs raw line breaks inside JSON strings (code written by models)', () => {
    const reply = '{"command": "run_code", "command_args": {"code": "x = 1\nprint(x)"}}';
    expect(parseCommandReply(reply)).toEqual(ok('run_code', { code: 'x = 1\nprint(x)' }));
  });

  it('accepts "args", and the nested {"command": {"name", "args"}} form', () => {
    expect(parseCommandReply('{"command": "finish", "args": {"result": "r"}}')).toEqual(ok('finish', { result: 'r' }));
    expect(parseCommandReply('{"command": {"name": "finish", "args": {"result": "r"}}}')).toEqual(ok('finish', { result: 'r' }));
    expect(parseCommandReply('{"command": "finish"}')).toEqual(ok('finish', {}));
  });

  it('explains malformed JSON, a missing command field, no JSON, and two commands', () => {
    const malformed = parseCommandReply('```json\n{"command": "finish", "command_args": {"result": "r"\n```');
    expect(malformed.ok).toBe(false);
    if (!malformed.ok) expect(malformed.error).toMatch(/^the JSON is malformed/);
    const noField = parseCommandReply('{"action": "finish"}');
    expect(noField).toEqual({ ok: false, error: 'the JSON object has no "command" field' });
    expect(parseCommandReply('I think we are done here.')).toEqual({ ok: false, error: 'no JSON object found in the reply' });
    const two = parseCommandReply('{"command": "a"} and {"command": "b"}');
    expect(two.ok).toBe(false);
    if (!two.ok) expect(two.error).toMatch(/2 commands \(a, b\); give exactly one/);
    const badArgs = parseCommandReply('{"command": "a", "command_args": [1, 2]}');
    expect(badArgs).toEqual({ ok: false, error: '"command_args" must be a JSON object of named arguments' });
  });

  it('counts the same command in a fence and in the text once', () => {
    expect(parseCommandReply('```\n{"command": "finish", "command_args": {"result": "r"}}\n```')).toEqual(ok('finish', { result: 'r' }));
  });
});

describe('checkCommand', () => {
  const state = {
    commands: {
      run_code: { executor: 'code', settings: { language: 'python' } },
      run_any: { executor: 'code' },
      update_plan: { executor: 'memory', settings: { op: 'write', file: 'plan' }, args: { content: 'The whole plan.' } },
      finish: { executor: 'finish' },
    },
  } as unknown as SopState;
  const specs = compileCommands('s', state, { executors: BUILTIN_EXECUTORS });

  it('accepts a known command with the right arguments, and takes descriptions from the SOP', () => {
    const r = checkCommand({ ok: true, command: 'update_plan', args: { content: 'x' } }, specs);
    expect(r.ok).toBe(true);
    expect(specs.update_plan!.args!.content!.description).toBe('The whole plan.');
    expect(Object.keys(specs.run_code!.args!)).toEqual(['code']);
    expect(Object.keys(specs.run_any!.args!)).toEqual(['language', 'code']);
  });

  it('names the commands when the command is unknown', () => {
    expect(checkCommand({ ok: true, command: 'deploy', args: {} }, specs)).toEqual({
      ok: false,
      error: 'unknown command "deploy"; the commands are: run_code, run_any, update_plan, finish',
    });
  });

  it('explains missing, unknown, mistyped and out-of-range arguments', () => {
    const missing = checkCommand({ ok: true, command: 'finish', args: {} }, specs);
    expect(missing).toEqual({ ok: false, error: 'command "finish" needs the argument "result"' });
    const unknown = checkCommand({ ok: true, command: 'finish', args: { result: 'r', colour: 'red' } }, specs);
    expect(unknown).toEqual({ ok: false, error: 'command "finish" has no argument "colour" (its arguments: result, summary)' });
    const typed = checkCommand({ ok: true, command: 'run_code', args: { code: 42 } }, specs);
    expect(typed).toEqual({ ok: false, error: 'argument "code" of command "run_code" must be a string' });
    const lang = checkCommand({ ok: true, command: 'run_any', args: { code: 'x', language: 'cobol' } }, specs);
    expect(lang).toEqual({ ok: false, error: 'argument "language" of command "run_any" must be one of "python", "javascript", "bash"' });
  });
});

describe('command diagnostics (sop validate)', () => {
  const sop = (commands: Record<string, unknown>, next: Record<string, string> = { 1: 'end' }) =>
    ({
      name: 't',
      agents: { A: { roles: { s: 'R' } } },
      root: 's',
      states: { s: { roles: ['R'], commands, next_states: next }, end: { final: true } },
    }) as unknown as Sop;

  it('reports an unknown executor, bad settings and unknown argument names with their pointers', () => {
    const d = commandDiagnostics(
      sop({
        a: { executor: 'teleport' },
        b: { executor: 'memory', settings: { op: 'erase' } },
        c: { executor: 'code', settings: { timeout: 5 } },
        e: { executor: 'finish', args: { outcome: 'x' } },
      }),
      { executors: BUILTIN_EXECUTORS },
    );
    expect(d[0]!.message).toMatch(/^unknown executor "teleport"; known executors: code, memory, library, human, sop, finish\b/);
    expect(d.map((x) => [x.pointer, x.message]).slice(1)).toEqual([
      ['/states/s/commands/b/settings', 'settings.op must be one of "read", "write", "append" (executor "memory")'],
      ['/states/s/commands/c/settings', 'unknown setting "timeout" (executor "code")'],
      ['/states/s/commands/e/args/outcome', '"outcome" is not an argument of this command (arguments: result, summary)'],
    ]);
  });

  it('requires next_states["1"] in a state with commands', () => {
    const d = commandDiagnostics(sop({ f: { executor: 'finish' } }, { 0: 's' }), { executors: BUILTIN_EXECUTORS });
    expect(d).toEqual([
      {
        severity: 'error',
        pointer: '/states/s/next_states',
        message: 'a state with commands needs next_states["1"]: a finish command and max_turns lead there',
      },
    ]);
  });
});
