// {{tail TEXT N}}: the last N lines of a text that keeps growing (a logs memory file kept across
// runs with --memory-dir), so that the prompts that show it stay bounded. Jarvis's planner and
// controller show the logs through it.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runSop } from '../src/api/run-sop.js';
import { loadSopFile } from '../src/api/loader/checked-load.js';
import { renderText } from '../src/core/prompt/templates.js';
import { checkTemplate } from '../src/format/sop/template-check.js';
import { tempDir } from './helpers/executor-context.js';
import { ScriptedLlm } from './helpers/scripted-llm.js';

const lines = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => `line ${from + i}`).join('\n') + '\n';

describe('the tail helper', () => {
  it('keeps the last N lines and counts the others; a shorter text is unchanged', () => {
    const logs = lines(1, 500);
    expect(renderText('{{tail logs 3}}', { logs }, '/t')).toBe('(497 earlier lines not shown)\nline 498\nline 499\nline 500\n');
    expect(renderText('{{tail logs 500}}', { logs }, '/t')).toBe(logs);
    expect(renderText('{{tail logs 2}}', { logs: 'a\nb\nc' }, '/t')).toBe('(1 earlier line not shown)\nb\nc');
    expect(renderText('[{{tail logs 5}}]', { logs: '' }, '/t')).toBe('[]');
  });

  it('sop validate knows it and its two arguments', () => {
    expect(checkTemplate('{{tail a 40}}')).toEqual([]);
    expect(
      checkTemplate('{{tail a}}')
        .map((p) => p.message)
        .join('\n'),
    ).toMatch(/tail takes 2 arguments, got 1/);
  });

  it("Jarvis's planner sees the code library and only the last 40 lines of a long logs file", async () => {
    const base = tempDir('sop-tail-');
    const M = join(base, 'M');
    mkdirSync(M, { recursive: true });
    writeFileSync(join(M, 'logs.md'), lines(1, 5000));
    writeFileSync(join(M, 'code_library.md'), 'def mean(xs: list) -> float:\n    """The mean of xs."""\n');
    const { sop, file } = loadSopFile('sops/jarvis.sop.json');
    const llm = new ScriptedLlm({ agent: [JSON.stringify({ command: 'propose_plan', command_args: { draft: '1. Answer.' } })] });
    await runSop(sop, { file, llm, out: join(base, 'runs'), inputs: { goal: 'Average the numbers' }, memoryDir: M, maxTurns: 1, yes: true })
      .result;
    const system = llm.calls[0]!.system;
    expect(system).toContain('which steps can reuse:\ndef mean(xs: list) -> float:');
    // 5000 lines, then a blank line and the run's header: the last 40 are line 4963..5000 and those two
    expect(system).toContain('the last lines of memory file logs):\n(4962 earlier lines not shown)\nline 4963\n');
    expect(system).toMatch(/line 5000\n\n## run \S+, \S+: Average the numbers/);
    expect(system).not.toContain('line 4962\n');
    expect(system.length).toBeLessThan(4000);
  }, 60_000);
});
