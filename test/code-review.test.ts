// run_code's review, as the seed's VS Code step: approve, edit or refuse the code before it
// runs, and feedback on the result afterwards (to the agent and into the logs). Scripted answers
// give them as tagged answers ("run: ...", "feedback: ..."); an untagged answer never approves
// code; --auto-run and --yes keep running code without asking.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { executor as code } from '../src/features/actions/executors/code.js';
import { ApprovalNeededError } from '../src/core/io/human.js';
import { answers, execContext, terminal } from './helpers/executor-context.js';

describe('run_code: approve, edit or refuse', () => {
  it('takes a scripted "run: approve"', async () => {
    const human = answers(['run: approve']);
    const ctx = execContext({ autoRun: false, human });
    const r = await code.run({ language: 'bash', code: 'touch ran.txt' }, ctx);
    expect(r.ok).toBe(true);
    expect(existsSync(join(ctx.ws.root, 'ran.txt'))).toBe(true);
    expect(human.consumed).toBe(1);
  });

  it('runs the code of a scripted "run: edit", and tells the agent what ran', async () => {
    const human = answers(['run: edit\necho "edited by the user" > who.txt\necho done']);
    const ctx = execContext({ autoRun: false, human });
    const r = await code.run({ language: 'bash', code: 'rm -rf ./*' }, ctx);
    expect(r.ok).toBe(true);
    expect(readFileSync(join(ctx.ws.root, 'who.txt'), 'utf8')).toBe('edited by the user\n');
    expect(r.result).toContain('The user edited the code before it ran; this is the code that ran:\necho "edited by the user" > who.txt');
    expect(r.summary).toBe('ran bash code (edited by the user): exit code 0; output: done');
  });

  it('does not run code refused by "run: refuse REASON", and gives the reason', async () => {
    const ctx = execContext({ autoRun: false, human: answers(['run: refuse it deletes files']) });
    const r = await code.run({ language: 'bash', code: 'touch ran.txt' }, ctx);
    expect(r.ok).toBe(false);
    expect(r.result).toBe('The user did not approve running the bash code, so it did not run. Their reply: it deletes files');
    expect(existsSync(join(ctx.ws.root, 'ran.txt'))).toBe(false);
  });

  it('never takes an untagged answer for an approval', async () => {
    const human = answers(['ok', 'run: approve']);
    const ctx = execContext({ autoRun: false, human });
    const err = await code.run({ language: 'bash', code: 'touch ran.txt' }, ctx).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApprovalNeededError);
    expect(human.consumed).toBe(0);
    expect(existsSync(join(ctx.ws.root, 'ran.txt'))).toBe(false);
  });

  it('keeps --auto-run and --yes: no question, and a tagged answer stays for later', async () => {
    for (const flags of [{ autoRun: true }, { autoRun: false, yes: true }]) {
      const human = answers(['run: refuse no']);
      const ctx = execContext({ ...flags, human });
      expect((await code.run({ language: 'bash', code: 'touch ran.txt' }, ctx)).ok).toBe(true);
      expect(human.consumed).toBe(0);
    }
  });

  it('at a terminal, runs the version the person edited in the file shown', async () => {
    const ctx = execContext({ autoRun: false });
    const file = join(ctx.ws.root, '.sop', 'code', 'cmd-turn1.sh');
    // the person edits the file, then approves: the edit happens before "yes" is typed
    const person = terminal([]);
    const human = Object.assign(person, {
      ask: async (q: Parameters<typeof person.ask>[0]) => {
        expect(q.prompt).toContain(`The code is also in ${file}`);
        writeFileSync(file, 'echo mine > mine.txt\n');
        return 'yes';
      },
    });
    const r = await code.run({ language: 'bash', code: 'echo theirs > theirs.txt' }, { ...ctx, human });
    expect(r.ok).toBe(true);
    expect(existsSync(join(ctx.ws.root, 'mine.txt'))).toBe(true);
    expect(existsSync(join(ctx.ws.root, 'theirs.txt'))).toBe(false);
    expect(r.summary).toContain('(edited by the user)');
  });

  it('after "edit" at a terminal, asks again showing the code as edited (what runs), not the original', async () => {
    const ctx = execContext({ autoRun: false });
    // the editor: a script that rewrites the file it is given
    const editorScript = join(ctx.ws.root, 'editor.sh');
    writeFileSync(editorScript, '#!/bin/sh\necho "echo mine > mine.txt" > "$1"\n', { mode: 0o755 });
    const saved = { VISUAL: process.env.VISUAL, EDITOR: process.env.EDITOR };
    process.env.VISUAL = editorScript;
    const prompts: string[] = [];
    const person = terminal([]);
    const human = Object.assign(person, {
      ask: async (q: Parameters<typeof person.ask>[0]) => {
        prompts.push(q.prompt);
        return prompts.length === 1 ? 'edit' : 'yes';
      },
    });
    try {
      const r = await code.run({ language: 'bash', code: 'echo theirs > theirs.txt' }, { ...ctx, human });
      expect(r.ok).toBe(true);
      expect(existsSync(join(ctx.ws.root, 'mine.txt'))).toBe(true);
    } finally {
      for (const [k, v] of Object.entries(saved))
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
    }
    expect(prompts).toHaveLength(2);
    expect(prompts[0]).toContain('echo theirs > theirs.txt');
    expect(prompts[1]).toContain('echo mine > mine.txt');
    expect(prompts[1]).not.toContain('echo theirs > theirs.txt');
  });
});

describe('run_code: feedback on the result', () => {
  it('takes a scripted "feedback:" answer into the result and the logs line, when the command asks', async () => {
    const human = answers(['feedback: round the numbers', 'Great, go on.']);
    const ctx = execContext({ settings: { feedback: true }, human });
    const r = await code.run({ language: 'bash', code: 'echo 3.14159' }, ctx);
    expect(r.result).toContain("The user's feedback on the result: round the numbers");
    expect(r.summary).toBe('ran bash code: exit code 0; output: 3.14159; the user\'s feedback: "round the numbers"');
    expect(human.consumed).toBe(1); // the untagged answer is left for its own question
    const again = await code.run({ language: 'bash', code: 'echo 2' }, ctx);
    expect(again.summary).toBe('ran bash code: exit code 0; output: 2');
    expect(human.consumed).toBe(1);
  });

  it('asks a person at a terminal (Enter: none), and asks nothing under --yes or without feedback: true', async () => {
    const person = terminal(['looks right']);
    const ctx = execContext({ settings: { feedback: true }, human: person });
    const r = await code.run({ language: 'bash', code: 'echo 1' }, ctx);
    expect(person.shown.join('')).toContain('Your feedback on the result');
    expect(r.summary).toContain('the user\'s feedback: "looks right"');

    const silent = terminal(['never asked']);
    await code.run({ language: 'bash', code: 'echo 1' }, execContext({ settings: { feedback: true }, yes: true, human: silent }));
    await code.run({ language: 'bash', code: 'echo 1' }, execContext({ human: silent }));
    expect(silent.consumed).toBe(0);
  });
});
