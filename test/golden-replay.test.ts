// Issue 24 acceptance: every shipped example's cassette replays to a byte-identical
// transcript.md, and to the same journal events (clock times aside), as before the step loop
// replaced the turn loop. The fixtures in test/fixtures/golden/ were written by the code before
// that change (c4cc6bb); `UPDATE_GOLDEN=1 npx vitest run test/golden-replay.test.ts` writes them again
// (only for a change that means to alter what a run records, said in its commit). Checked again
// on h-core2: a build of c4cc6bb writes these fixtures byte for byte (jarvis with eda2c1b's SOP
// and tail helper, the one later change meant to alter a record), once the empty actions state
// that helpers/golden.ts leaves out is left out.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from './helpers/cli.js';
import { GOLDEN_EXAMPLES, goldenOf, runFolderIn } from './helpers/golden.js';

const FIXTURES = join('test', 'fixtures', 'golden');
const update = process.env.UPDATE_GOLDEN === '1';

describe('shipped examples replay as before', () => {
  it('every cassette under examples/ is replayed here', () => {
    const cassettes = readdirSync('examples', { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.cassette.json'))
      .map((f) => join('examples', f))
      .sort();
    expect(cassettes.length).toBeGreaterThan(0);
    const replayed = GOLDEN_EXAMPLES.map((e) => e.args[e.args.indexOf('--llm') + 1]!.replace(/^replay:/, '')).sort();
    expect(replayed).toEqual(cassettes);
  });

  for (const example of GOLDEN_EXAMPLES) {
    it(`${example.name}: transcript.md and journal events`, async () => {
      const out = mkdtempSync(join(tmpdir(), `sop-golden-${example.name}-`));
      const r = await runCli([...example.args, '--out', out, '--quiet']);
      expect(r.status, r.stderr).toBe(0);
      const got = goldenOf(runFolderIn(out));
      const transcriptFile = join(FIXTURES, `${example.name}.transcript.md`);
      const eventsFile = join(FIXTURES, `${example.name}.events.jsonl`);
      if (update) {
        mkdirSync(FIXTURES, { recursive: true });
        writeFileSync(transcriptFile, got.transcript);
        writeFileSync(eventsFile, got.events);
      }
      expect(got.transcript).toBe(readFileSync(transcriptFile, 'utf8'));
      // line by line, so a difference names the event
      const want = readFileSync(eventsFile, 'utf8').split('\n');
      const lines = got.events.split('\n');
      for (let i = 0; i < Math.max(want.length, lines.length); i++) expect(lines[i], `event ${i + 1}`).toBe(want[i]);
    });
  }
});
