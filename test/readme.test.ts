// The README's SOP example must stay valid: docs that lie are worse than none.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { validateSopDocument } from '../src/loader/load.js';

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
});
