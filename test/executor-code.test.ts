// The code executor: real child processes in a real workspace folder.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCode } from '../src/features/actions/executors/code-runner.js';
import { executor as code } from '../src/features/actions/executors/code.js';
import { answers, execContext, terminal } from './helpers/executor-context.js';
import { AnswersFileInput, ApprovalNeededError } from '../src/core/io/human.js';
import { until } from './helpers/until.js';
import { scaled } from './helpers/time.js';

/** Alive and not a zombie (a zombie is dead, only not yet reaped by its new parent). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

const waitDead = (pid: number, ms = 3000) => until(() => !alive(pid), { timeoutMs: ms });

describe('code executor', () => {
  it('runs Python in the workspace and returns exit code and stdout', async () => {
    const ctx = execContext();
    const r = await code.run({ language: 'python', code: 'import os\nopen("out.txt", "w").write("hi")\nprint("cwd", os.getcwd())' }, ctx);
    expect(r.ok).toBe(true);
    expect(r.result).toContain('The python code ran: exit code 0.');
    expect(r.result).toContain(`cwd ${ctx.ws.root}`);
    expect(readFileSync(join(ctx.ws.root, 'out.txt'), 'utf8')).toBe('hi');
    expect(r.summary).toBe(`ran python code: exit code 0; output: cwd ${ctx.ws.root}`);
  });

  it('runs JavaScript and shell too', async () => {
    const ctx = execContext();
    const js = await code.run({ language: 'javascript', code: 'console.log(6 * 7)' }, ctx);
    expect(js.result).toContain('stdout:\n42');
    const sh = await code.run({ language: 'bash', code: 'echo "$SOP_WORKSPACE"' }, ctx);
    expect(sh.result).toContain(`stdout:\n${ctx.ws.root}`);
  });

  it('reports a non-zero exit with stderr, as a failed result', async () => {
    const r = await code.run({ language: 'bash', code: 'echo partial; echo "it broke" >&2; exit 3' }, execContext());
    expect(r.ok).toBe(false);
    expect(r.result).toContain('exit code 3');
    expect(r.result).toContain('stdout:\npartial');
    expect(r.result).toContain('stderr:\nit broke');
  });

  it('kills the whole process tree at the timeout', async () => {
    // (a timeout long enough for bash to start and write the pid on a loaded machine)
    const timeoutMs = scaled(3000);
    const ctx = execContext({ settings: { timeout_ms: timeoutMs } });
    // The script starts a grandchild in the background, records its pid, then blocks.
    const r = await code.run({ language: 'bash', code: 'sleep 300 &\necho $! > grandchild.pid\nsleep 300' }, ctx);
    expect(r.ok).toBe(false);
    expect(r.result).toContain(`killed after the ${Math.round(timeoutMs / 100) / 10} s timeout`);
    const pid = Number(readFileSync(join(ctx.ws.root, 'grandchild.pid'), 'utf8'));
    expect(pid).toBeGreaterThan(0);
    expect(await waitDead(pid)).toBe(true);
  });

  it('kills what a finished script left running in the background', async () => {
    const ctx = execContext();
    const o = await runCode({ language: 'bash', code: 'sleep 300 &\necho $!', cwd: ctx.ws.root, timeoutMs: 10_000 });
    expect(o.exitCode).toBe(0);
    expect(await waitDead(Number(o.stdout.trim()))).toBe(true);
  });

  it('caps each output stream and says how much was cut', async () => {
    const ctx = execContext({ settings: { max_output: 1000 } });
    const r = await code.run({ language: 'python', code: 'import sys\nsys.stdout.write("x" * 100000)\nsys.stderr.write("e" * 5000)' }, ctx);
    expect(r.ok).toBe(true);
    expect(r.result).toContain(`stdout:\n${'x'.repeat(1000)}\n[... 99000 more bytes of stdout were cut]`);
    expect(r.result).toContain(`stderr:\n${'e'.repeat(1000)}\n[... 4000 more bytes of stderr were cut]`);
  });

  it('asks a person at a terminal for approval unless --auto-run, and does not run refused code', async () => {
    const refused = execContext({ autoRun: false, human: terminal(['no, do not touch my files']) });
    const r = await code.run({ language: 'bash', code: 'touch ran.txt' }, refused);
    expect(r.ok).toBe(false);
    expect(r.result).toBe('The user did not approve running the bash code, so it did not run. Their reply: no, do not touch my files');
    expect(existsSync(join(refused.ws.root, 'ran.txt'))).toBe(false);
    expect(refused.human.consumed).toBe(1);

    const approved = execContext({ autoRun: false, human: terminal(['yes']) });
    const ok = await code.run({ language: 'bash', code: 'touch ran.txt' }, approved);
    expect(ok.ok).toBe(true);
    expect(existsSync(join(approved.ws.root, 'ran.txt'))).toBe(true);

    const yes = execContext({ autoRun: false, yes: true });
    expect((await code.run({ language: 'bash', code: 'true' }, yes)).ok).toBe(true);
  });

  it('never takes an approval from an answers file: the run stops, resumable, naming --auto-run', async () => {
    const human = answers(['ok', 'yes']);
    const ctx = execContext({ autoRun: false, human });
    const err = await code.run({ language: 'bash', code: 'touch ran.txt' }, ctx).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApprovalNeededError);
    expect((err as ApprovalNeededError).resumable).toBe(true);
    expect((err as Error).message).toMatch(/answers from options\.answers answer questions only.*options\.autoRun/);
    expect(existsSync(join(ctx.ws.root, 'ran.txt'))).toBe(false);
    expect(human.consumed).toBe(0); // the "ok" is still there for the question it was meant for

    // With a terminal at hand, the approval is asked there; the file's answers stay untouched.
    const person = terminal(['y']);
    const both = execContext({ autoRun: false, human: new AnswersFileInput((human as AnswersFileInput).file, { approver: person }) });
    expect((await code.run({ language: 'bash', code: 'touch ran.txt' }, both)).ok).toBe(true);
    expect(existsSync(join(both.ws.root, 'ran.txt'))).toBe(true);
    expect(both.human.consumed).toBe(0);
    expect(person.consumed).toBe(1);
  });

  it('shows the code in the approval question', async () => {
    const person = terminal(['y']);
    const ctx = execContext({ autoRun: false, human: person });
    await code.run({ language: 'bash', code: 'echo 1' }, ctx);
    expect(person.shown.join('')).toMatch(
      /^\nAnn wants to run this bash code in the workspace \(cmd\):\n\necho 1\n\nThe code is also in \S+\/workspace\/\.sop\/code\/cmd-turn1\.sh: you may edit it there[^\n]*\n\nRun it\?[\s\S]*Ann \(R\) > $/,
    );
  });

  it('does not hand secrets from the environment to the code', async () => {
    process.env.SOP_TEST_API_KEY = 'sk-should-not-leak';
    try {
      const r = await code.run({ language: 'bash', code: 'env' }, execContext());
      expect(r.result).not.toContain('sk-should-not-leak');
      expect(r.result).toContain('SOP_LAUNCH_DIR=');
    } finally {
      delete process.env.SOP_TEST_API_KEY;
    }
  });

  it('says when the interpreter cannot be started', async () => {
    const ctx = execContext();
    const path = process.env.PATH;
    process.env.PATH = '/nonexistent';
    try {
      const r = await code.run({ language: 'python', code: 'print(1)' }, ctx);
      expect(r.ok).toBe(false);
      expect(r.result).toContain('could not start: python3 is not installed or not on PATH');
    } finally {
      process.env.PATH = path;
    }
  });
});
