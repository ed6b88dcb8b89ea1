// Acceptance of examples/mcp: `sop run examples/mcp/notes.sop.json --llm replay:... --yes` exits 0,
// its journal records the MCP tool calls, none failed, and their results are in the transcript.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { journal, onlyRun, tempDir } from './helpers/mcp-notes.js';
import { spawnCliSync } from './helpers/cli.js';

describe('examples/mcp', () => {
  it('runs offline from its hand-written cassette, calling the notes server', () => {
    const out = tempDir();
    const r = spawnCliSync(
      ['run', 'examples/mcp/notes.sop.json', '--llm', 'replay:examples/mcp/notes.cassette.json', '--yes', '--out', out, '--quiet'],
      { encoding: 'utf8' },
    );
    expect(r.status, r.stderr).toBe(0);
    const runDir = onlyRun(out);
    const calls = journal(runDir).filter((e) => e.type === 'executor_result' && e.executor === 'mcp');
    expect(calls.map((e) => e.command)).toEqual([
      'notes__search_notes',
      'notes__add_note',
      'notes__add_note',
      'notes__add_note',
      'notes__list_notes',
    ]);
    expect(calls.every((e) => e.ok)).toBe(true);
    const transcript = readFileSync(join(runDir, 'transcript.md'), 'utf8');
    for (const e of calls) expect(transcript).toContain(e.result.split('\n')[0]);
    expect(transcript).toContain('#3 Naps help too [sleep, naps]');
    expect(JSON.parse(readFileSync(join(runDir, 'workspace', 'notes.json'), 'utf8'))).toHaveLength(3);
  });
});
