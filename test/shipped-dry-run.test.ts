// Issue 2 acceptance: every shipped SOP runs with `--llm mock --max-turns 20`, unattended
// (no terminal, no --answers), except that people playing roles need --answers.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const cli = join(process.cwd(), 'dist/src/cli/main.js');
const shipped = [
  ...readdirSync('sops').filter((f) => f.endsWith('.sop.json')).map((f) => join('sops', f)),
  ...readdirSync('examples').flatMap((d) => readdirSync(join('examples', d)).filter((f) => f.endsWith('.sop.json')).map((f) => join('examples', d, f))),
];

describe('shipped SOPs dry-run with the mock LLM', () => {
  it('finds the shipped SOPs', () => {
    expect(shipped).toContain('sops/jarvis.sop.json');
    expect(shipped).toContain('examples/debate/debate.sop.json');
  });

  for (const file of shipped) {
    it(`${file} runs to a final state or --max-turns 20`, () => {
      const out = mkdtempSync(join(tmpdir(), 'sop-dry-'));
      const doc = JSON.parse(readFileSync(file, 'utf8')) as { agents: Record<string, { human?: boolean }> };
      const hasHuman = Object.values(doc.agents).some((a) => a.human);
      const answers = join(file, '..', 'answers.txt');
      const args = ['run', file, '--llm', 'mock', '--max-turns', '20', '--out', out, '--quiet', '--goal', 'a test goal',
        ...(hasHuman ? ['--answers', answers] : [])];
      const r = spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8', input: '', timeout: 60_000 });
      expect(r.stderr).not.toMatch(/\n\s+at /);
      expect(r.status, r.stderr).toBe(0);
      expect(r.stderr).toMatch(/Finished in state|Stopped after --max-turns 20/);
    });
  }
});
