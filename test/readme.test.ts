// The README's SOP example must stay valid: docs that lie are worse than none.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { validateSopDocument } from '../src/api/loader/checked-load.js';

describe('README', () => {
  it('shows a SOP example that validates', () => {
    const readme = readFileSync('README.md', 'utf8');
    const block = /## A SOP by example\s+```json\n([\s\S]*?)```/.exec(readme);
    expect(block).not.toBeNull();
    const doc = JSON.parse(block![1]!);
    const { sop, warnings } = validateSopDocument(doc, 'README.md');
    expect(sop.name).toBe('mini-debate');
    expect(warnings).toEqual([]);
  });

  it('shows a controller block (judge, speaker, llm) that validates in a SOP', () => {
    const readme = readFileSync('README.md', 'utf8');
    const example = JSON.parse(/## A SOP by example\s+```json\n([\s\S]*?)```/.exec(readme)![1]!);
    const block = /### The judge and the speaker choice[\s\S]*?```json\n("controller": [\s\S]*?)```/.exec(readme);
    expect(block).not.toBeNull();
    const { controller } = JSON.parse(`{${block![1]!}}`) as { controller: Record<string, unknown> };
    expect(Object.keys(controller)).toEqual(expect.arrayContaining(['type', 'judge', 'speaker']));
    example.states.debate.controller = controller;
    const { sop, warnings } = validateSopDocument(example, 'README.md');
    expect(sop.states.debate!.controller?.speaker?.system_prompt).toMatch(/floor/);
    expect(warnings).toEqual([]);
  });

  it('documents every controller key of the schema', () => {
    const readme = readFileSync('README.md', 'utf8');
    const schema = JSON.parse(readFileSync('schemas/sop.schema.json', 'utf8'));
    for (const key of Object.keys(schema.definitions.controller.properties)) expect(readme).toContain(`\`controller.${key}\``);
  });
});
