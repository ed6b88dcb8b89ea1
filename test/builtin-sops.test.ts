// Built-in SOPs by name: `sop run jarvis.sop.json` (and `sop run jarvis`) from any folder runs
// the package's sops/jarvis.sop.json; `sop list` shows the built-ins with their descriptions; a
// name that is neither a file nor a built-in gets one clear line.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from './helpers/executor-context.js';
import { spawnCliAsync } from './helpers/cli.js';

const ROOT = join(import.meta.dirname, '..');

function sop(args: string[], cwd: string) {
  return spawnCliAsync([...args], { cwd, encoding: 'utf8', timeout: 120_000, env: { ...process.env, SOP_DEBUG: '' } });
}

describe('built-in SOPs', () => {
  for (const name of ['jarvis.sop.json', 'jarvis', 'sops/jarvis.sop.json']) {
    it(`sop run ${name} from an empty folder outside the repository starts the built-in Jarvis`, async () => {
      const cwd = tempDir('sop-anywhere-');
      const r = await sop(['run', name, '--llm', 'mock', '--goal', 'x', '--max-turns', '3', '--json'], cwd);
      expect(r.status, r.stderr).toBe(0);
      const started = JSON.parse(r.stdout.split('\n')[0]!);
      expect(started.type).toBe('run_started');
      expect(started.sop).toBe('jarvis');
      expect(started.file).toBe(join(ROOT, 'sops', 'jarvis.sop.json'));
      expect(readdirSync(join(cwd, 'runs'))).toHaveLength(1); // the run folder is where sop was started
    }, 120_000);
  }

  it('sop list shows every built-in with its description', async () => {
    const r = await sop(['list'], tempDir('sop-list-'));
    expect(r.status).toBe(0);
    for (const f of readdirSync(join(ROOT, 'sops')).filter((n) => n.endsWith('.sop.json'))) {
      const doc = JSON.parse(readFileSync(join(ROOT, 'sops', f), 'utf8')) as { description: string };
      expect(r.stdout).toContain(`\n${f.replace('.sop.json', '')}\n`);
      expect(r.stdout.replace(/\s+/g, ' ')).toContain(doc.description.replace(/\s+/g, ' ').slice(0, 60));
    }
  });

  it('a name that is neither a file nor a built-in: one clear line, exit 1', async () => {
    const r = await sop(['run', 'nosuch.sop.json', '--llm', 'mock'], tempDir('sop-missing-'));
    expect(r.status).toBe(1);
    expect(r.stderr).toBe(
      'error: nosuch.sop.json: no such file here, and no built-in SOP of that name (built-in: coder, extend_library, jarvis, plan_writer, scientist; sop list describes them)\n',
    );
  });

  it('a file in the current folder wins over a built-in of the same name', async () => {
    const cwd = tempDir('sop-local-');
    const local = JSON.parse(readFileSync(join(ROOT, 'sops', 'plan_writer.sop.json'), 'utf8')) as Record<string, unknown>;
    writeFileSync(join(cwd, 'jarvis.sop.json'), JSON.stringify({ ...local, name: 'local-one' }));
    const r = await sop(['validate', 'jarvis.sop.json'], cwd);
    expect(r.status).toBe(0);
    const g = await sop(
      ['run', 'jarvis.sop.json', '--llm', 'mock', '--max-turns', '1', '--json', '--input', 'goal=x', '--input', 'guidance=y'],
      cwd,
    );
    expect(JSON.parse(g.stdout.split('\n')[0]!).sop).toBe('local-one');
  }, 60_000);
});
