// --sandbox: stdio MCP servers run under the code sandbox (bubblewrap): the notes server can write
// in the run's workspace, and not outside it. Skipped, with the reason, where bwrap cannot work.
import { copyFileSync, existsSync, readFileSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runSop } from '../src/api/run-sop.js';
import { sandboxSupport } from '../src/shared/sandbox/sandbox.js';
import { loadSopFile } from '../src/api/loader/checked-load.js';
import { cmd, journal, NOTES_SERVER, tempDir, toolSop, writeSop } from './helpers/mcp-notes.js';

const support = sandboxSupport();
if (!support.ok) console.warn(`mcp sandbox tests skipped: ${support.reason}`);

async function run(
  dir: string,
  env: Record<string, string>,
  sandbox: boolean,
  server: object = { command: process.execPath, args: [NOTES_SERVER] },
) {
  const { file, cassette } = writeSop(dir, toolSop({ notes: { ...server, env } }, ['notes/*']), [
    cmd('notes__add_note', { title: 'Boxed', text: 'Written from inside the sandbox.' }),
    cmd('finish', { result: 'ok' }),
  ]);
  const handle = runSop(loadSopFile(file).sop, {
    file,
    llm: `replay:${cassette}`,
    out: join(dir, 'runs'),
    yes: true,
    sandbox,
    mcpSandbox: sandbox,
  });
  const result = await handle.result;
  const add = journal(handle.dir!).find((e) => e.type === 'executor_result' && e.command === 'notes__add_note')!;
  return { result, add, runDir: handle.dir! };
}

describe.skipIf(!support.ok)('stdio MCP servers under --sandbox', () => {
  it('write in the workspace only', async () => {
    const dir = tempDir();
    // in the workspace ($SOP_WORKSPACE): allowed
    const inside = await run(dir, {}, true);
    expect(inside.result.status).toBe('finished');
    expect(inside.add.ok).toBe(true);
    expect(JSON.parse(readFileSync(join(inside.runDir, 'workspace', 'notes.json'), 'utf8'))[0].title).toBe('Boxed');

    // outside it: the sandbox's /tmp is its own, so the file is not written where the server was told
    const outside = join(dir, 'outside.json');
    const boxed = await run(tempDir(), { NOTES_FILE: outside }, true);
    expect(boxed.result.status).toBe('finished'); // the tool's error goes back to the agent
    expect(boxed.add.ok).toBe(false);
    expect(boxed.add.result).toMatch(/^The MCP tool notes\/add_note reported an error:\n.*(ENOENT|EROFS|EACCES)/s);
    expect(existsSync(outside)).toBe(false);

    // the same server without --sandbox writes there
    const free = await run(tempDir(), { NOTES_FILE: outside }, false);
    expect(free.add.ok).toBe(true);
    expect(existsSync(outside)).toBe(true);
  });

  it('start from the system temp folder: the SOP, the script and its linked node_modules there are readable', async () => {
    const dir = tempDir();
    expect(dir.startsWith(tmpdir())).toBe(true);
    copyFileSync(NOTES_SERVER, join(dir, 'notes-server.mjs'));
    symlinkSync(join(process.cwd(), 'node_modules'), join(dir, 'node_modules')); // a linked node_modules, as pnpm or a monorepo has
    const r = await run(dir, {}, true, { command: 'node', args: ['notes-server.mjs'] });
    expect(r.result.status, r.result.error?.message).toBe('finished');
    expect(r.add.ok).toBe(true);
  });
});
