// Building an executor's context for tests: a real workspace and memory folder in a temp dir,
// real templates, and human answers from an answers file (the way --answers gives them).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import type { ExecContext } from '../../src/core/commands/executor.js';
import { AnswersFileInput, NoHumanInput, TerminalInput, type HumanInput } from '../../src/core/io/human.js';
import { TemplateSet } from '../../src/core/prompt/templates.js';
import { MemoryFiles } from '../../src/core/workspace/memory-files.js';
import { Workspace } from '../../src/core/workspace/workspace.js';

export function tempDir(prefix = 'sop-exec-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** A HumanInput answering from a list, through a real answers file. */
export function answers(list: string[]): HumanInput {
  const file = join(tempDir('sop-answers-'), 'answers.json');
  writeFileSync(file, JSON.stringify(list));
  return new AnswersFileInput(file);
}

/**
 * A person at a terminal: the real TerminalInput, reading lines from a stream; each answer is
 * typed once the question's prompt (`NAME (ROLE) > `) has been shown. `shown` is the output.
 */
export function terminal(list: string[]): TerminalInput & { shown: string[] } {
  const input = new PassThrough();
  const shown: string[] = [];
  let next = 0;
  const output = new Writable({
    write(chunk: Buffer, _enc, done) {
      const text = chunk.toString();
      shown.push(text);
      if (/> $/.test(text) && next < list.length) input.write(`${list[next++]}\n`);
      done();
    },
  });
  return Object.assign(new TerminalInput({ input, output }), { shown });
}

export interface TestContext extends ExecContext {
  dir: string;
  ws: Workspace;
}

export function execContext(o: Partial<ExecContext> & { memoryFiles?: Record<string, string> } = {}): TestContext {
  const dir = tempDir();
  const ws = new Workspace(join(dir, 'workspace')).ensure();
  const memory = o.memory ?? new MemoryFiles({ dir: join(dir, 'memory'), initial: o.memoryFiles ?? { plan: '', code_library: '' } }).init();
  return {
    dir,
    ws,
    command: 'cmd',
    settings: {},
    state: 's',
    agent: 'Ann',
    role: 'R',
    turn: 1,
    memory,
    workspace: () => ws,
    human: new NoHumanInput(),
    autoRun: true,
    yes: false,
    sandbox: false,
    templates: new TemplateSet({}),
    baseDir: dir,
    launchDir: dir,
    renderText: (t) => t,
    runSubflow: async () => {
      throw new Error('no sub-flows in this test');
    },
    ...o,
  };
}
