// The human executor (ask, intermediate and final answers, reviews of a draft) and the built-in
// plan writer SOP with the user in the loop: answers come from an answers file, as with --answers.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { executor as human } from '../src/features/actions/executors/human.js';
import type { HumanInput } from '../src/core/io/human.js';
import { Run } from '../src/api/engine/run-with-features.js';
import { loadSopFile } from '../src/api/loader/checked-load.js';
import { answers, execContext, tempDir } from './helpers/executor-context.js';
import { ScriptedLlm } from './helpers/scripted-llm.js';

describe('human executor', () => {
  it('asks a question and returns the reply', async () => {
    const ctx = execContext({ human: answers(['the CSV is in data/']), settings: { kind: 'ask' } });
    const r = await human.run({ question: 'Where is the CSV?' }, ctx);
    expect(r.result).toBe('The user replied: the CSV is in data/');
    expect(r.summary).toBe('asked the user ("Where is the CSV?"); the user replied: "the CSV is in data/"');
    expect(r.finish).toBeUndefined();
  });

  it('accepts everything without asking under --yes', async () => {
    const ctx = execContext({ yes: true, settings: { kind: 'final' } });
    const r = await human.run({ answer: 'report.md is ready' }, ctx);
    expect(r.result).toBe('The user replied: yes (answered automatically: the run accepts everything, --yes)');
    expect(ctx.human.consumed).toBe(0);
  });

  it('review: feedback goes back to the agent; acceptance ends the state with the saved draft', async () => {
    const ctx = execContext({ human: answers(['add a step to test it', 'ok']), settings: { kind: 'review', save_to: 'plan' } });
    const first = await human.run({ draft: '1. write it' }, ctx);
    expect(first.finish).toBeUndefined();
    expect(first.result).toBe(
      'The user did not accept the draft. Their feedback: add a step to test it\nRevise the draft accordingly and propose it again.',
    );
    const second = await human.run({ draft: '1. write it\n2. test it' }, ctx);
    expect(second.finish).toEqual({ result: '1. write it\n2. test it', summary: 'draft accepted and saved to plan' });
    expect(readFileSync(join(ctx.dir, 'memory', 'plan.md'), 'utf8')).toBe('1. write it\n2. test it\n');
  });

  it('review: a draft the user edited in its file is the one accepted', async () => {
    const base = execContext({ settings: { kind: 'review', save_to: 'plan' } });
    const planFile = join(base.dir, 'memory', 'plan.md');
    const editor: HumanInput = {
      id: 'editor',
      consumed: 0,
      async ask(q) {
        expect(q.prompt).toContain(`It is saved in ${planFile}; you may edit that file directly`);
        writeFileSync(planFile, '1. write it\n2. test it (added by the user)\n');
        return 'ok';
      },
    };
    const r = await human.run({ draft: '1. write it' }, { ...base, human: editor });
    expect(r.finish?.result).toBe('1. write it\n2. test it (added by the user)');
    expect(r.result).toContain(
      'The user accepted the draft after editing it. The accepted version:\n1. write it\n2. test it (added by the user)',
    );
  });
});

describe('plan_writer.sop.json', () => {
  it('revises the plan with the user until it is accepted', async () => {
    const { sop } = loadSopFile('sops/plan_writer.sop.json');
    const propose = (draft: string) => JSON.stringify({ command: 'propose_plan', command_args: { draft } });
    const llm = new ScriptedLlm({ agent: [propose('1. Do it.'), propose('1. Do it.\n2. Check it.')] });
    const dir = tempDir('sop-planner-');
    const result = await new Run({
      sop,
      file: 'sops/plan_writer.sop.json',
      llm,
      inputs: { goal: 'ship it' },
      human: answers(['please add a check', 'ok']),
      actions: { runDir: dir },
    }).run();
    expect(result.status).toBe('finished');
    expect(result.result).toBe('1. Do it.\n2. Check it.');
    expect(readFileSync(join(dir, 'memory', 'plan.md'), 'utf8')).toBe('1. Do it.\n2. Check it.\n');
    // The second proposal was written knowing the user's feedback.
    const second = llm
      .of('agent')[1]!
      .messages.map((m) => m.content)
      .join('\n');
    expect(second).toContain('The user did not accept the draft. Their feedback: please add a check');
    expect(llm.of('agent')[0]!.system).toContain('The goal: ship it');
  });
});
