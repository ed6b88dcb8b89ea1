// The contract of an executor (src/core/commands/executor.ts), as a SOP's commands meet it: its settings
// schema accepts a valid example and refuses a wrong one in one clear line, its arguments are
// well-formed, and a command with missing or unknown arguments is refused naming them.
import { describe, expect, it } from 'vitest';
import { checkCommand, compileCommand } from '../../src/core/commands/commands.js';
import { BUILTIN_EXECUTORS } from '../../src/api/loader/executors.js';
import type { ArgsEnv, Executor } from '../../src/core/commands/executor.js';

export interface ExecutorExample {
  /** Settings the executor accepts. */
  settings: Record<string, unknown>;
  /** What the run gives args() (a sub-flow's arguments need its SOP file's folder). */
  env?: ArgsEnv;
}

const oneLine = (fn: () => unknown): string => {
  try {
    fn();
  } catch (err) {
    const message = (err as Error).message;
    expect(message).not.toContain('\n');
    return message;
  }
  throw new Error('expected an error');
};

export function executorContract(executor: Executor, example: ExecutorExample): void {
  const name = executor.name;
  const compile = (settings: Record<string, unknown>) =>
    compileCommand('work', 'cmd', { executor: name, settings }, { ...example.env, executors: BUILTIN_EXECUTORS });

  describe(`executor "${name}"`, () => {
    it('is the built-in executor of its name, with a one-line description', () => {
      expect(BUILTIN_EXECUTORS[name]).toBe(executor);
      expect(executor.description.trim()).not.toBe('');
      expect(executor.description).not.toContain('\n');
    });

    it('accepts its example settings and refuses an unknown setting in one line that names it', () => {
      const spec = compile(example.settings);
      expect(spec.executor).toBe(executor);
      expect(spec.settings).toEqual(example.settings);
      expect(oneLine(() => compile({ ...example.settings, no_such_setting: 1 }))).toBe(
        `unknown setting "no_such_setting" (executor "${name}")`,
      );
    });

    it('refuses settings of the wrong type in one line', () => {
      expect(oneLine(() => compile({ ...example.settings, ...wrongTyped(executor) }))).toMatch(new RegExp(`\\(executor "${name}"\\)$`));
    });

    it('declares well-formed arguments, known once the run gives its environment', () => {
      const { args } = compile(example.settings);
      expect(args).toBeDefined();
      for (const [arg, spec] of Object.entries(args!)) {
        expect(arg).toMatch(/^[a-z][a-z0-9_]*$/);
        expect(['string', 'integer', 'number', 'boolean']).toContain(spec.type);
        expect(spec.description.trim(), `description of "${arg}"`).not.toBe('');
        if (spec.enum) {
          expect(spec.type).toBe('string');
          expect(spec.enum.length).toBeGreaterThan(0);
        }
      }
    });

    it('refuses a command with a required argument missing, or an argument it does not have, naming it', () => {
      const spec = compile(example.settings);
      const args = spec.args ?? {};
      const required = Object.keys(args).filter((a) => args[a]!.required);
      const valid = Object.fromEntries(required.map((a) => [a, sample(args[a]!)]));
      expect(checkCommand({ ok: true, command: 'cmd', args: valid }, { cmd: spec })).toMatchObject({ ok: true });
      for (const missing of required) {
        const { [missing]: _dropped, ...rest } = valid;
        expect(checkCommand({ ok: true, command: 'cmd', args: rest }, { cmd: spec })).toEqual({
          ok: false,
          error: `command "cmd" needs the argument "${missing}"`,
        });
      }
      const extra = checkCommand({ ok: true, command: 'cmd', args: { ...valid, no_such_arg: 'x' } }, { cmd: spec });
      expect(extra).toMatchObject({ ok: false });
      expect((extra as { error: string }).error).toContain('has no argument "no_such_arg"');
    });
  });
}

/** A value of the argument's type. */
function sample(spec: { type: string; enum?: string[] }): unknown {
  if (spec.enum) return spec.enum[0];
  return spec.type === 'string' ? 'x' : spec.type === 'boolean' ? true : 1;
}

/** One declared setting given a value of another type (every executor here declares at least one, or none at all). */
function wrongTyped(executor: Executor): Record<string, unknown> {
  const props = (executor.settings.properties ?? {}) as Record<string, { type?: string }>;
  const [key, def] = Object.entries(props).find(([, d]) => typeof d.type === 'string') ?? [];
  if (!key) return { no_such_setting: 1 }; // no settings at all: any setting is wrong
  return { [key]: def!.type === 'string' ? 12345 : 'not-a-' + def!.type };
}
