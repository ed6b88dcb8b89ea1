// Hostile MCP servers: a server that is not there, one that dies in the middle of a call, throws,
// answers with a megabyte or an image, or writes garbage on stdout. Each tool failure goes back to
// the agent as a failed result and the run goes on; a server that cannot start stops the run with
// one clear line. Nothing is a stack trace.
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runSop } from '../src/api/run-sop.js';
import { loadSopFile } from '../src/api/loader/checked-load.js';
import { cmd, journal, tempDir, toolSop, writeSop } from './helpers/mcp-notes.js';

const HOSTILE = { command: process.execPath, args: [join(process.cwd(), 'test/fixtures/mcp/hostile-server.mjs')] };
let modes = 0;
let wentOn = 0;
let clearStops = 0;

async function run(servers: Record<string, unknown>, replies: Parameters<typeof writeSop>[2]) {
  const dir = tempDir();
  const { file, cassette } = writeSop(
    dir,
    toolSop(
      servers,
      Object.keys(servers).map((s) => `${s}/*`),
    ),
    replies,
  );
  const handle = runSop(loadSopFile(file).sop, { file, llm: `replay:${cassette}`, out: join(dir, 'runs'), yes: true });
  const result = await handle.result;
  const results = journal(handle.dir!).filter((e) => e.type === 'executor_result' && e.executor === 'mcp');
  return { result, results };
}

describe('hostile MCP servers', () => {
  it('a server that is not there: the run stops with one line naming it', async () => {
    modes++;
    const { result } = await run({ gone: { command: '/nonexistent/mcp-server' } }, [cmd('gone__x')]);
    expect(result.status).toBe('failed');
    expect(result.error?.message).toMatch(/^MCP server "gone" \("\/nonexistent\/mcp-server"\) did not start: [^\n]+$/);
    if (result.status === 'failed' && !/\n\s+at /.test(result.error!.message)) clearStops++;
  });

  it.each([
    ['a tool that throws', 'hostile__throw', /reported an error:\n.*the handler blew up/s],
    [
      'a server that dies in the middle of a call',
      'hostile__crash',
      /^The command hostile__crash could not be carried out: hostile\/crash: MCP error -32000: Connection closed$/,
    ],
  ])('%s: a failed result, and the run goes on', async (_what, command, pattern) => {
    modes++;
    const { result, results } = await run({ hostile: HOSTILE }, [
      cmd(command),
      cmd('hostile__noisy', { word: 'after' }),
      cmd('finish', { result: 'survived' }),
    ]);
    expect(result.status, result.error?.message).toBe('finished');
    expect(results[0]!.ok).toBe(false);
    expect(results[0]!.result).toMatch(pattern);
    expect(results[0]!.result).not.toMatch(/\n\s+at /);
    expect([results[1]!.ok, results[1]!.result]).toEqual([true, 'echo after']); // a dead server is started again
    wentOn++;
  });

  it('a megabyte answer is truncated; an image is described; garbage on stdout does not break the call', async () => {
    modes += 3;
    const { result, results } = await run({ hostile: HOSTILE }, [
      cmd('hostile__huge'),
      cmd('hostile__image'),
      cmd('hostile__noisy', { word: 'still here' }),
      cmd('finish', { result: 'ok' }),
    ]);
    expect(result.status, result.error?.message).toBe('finished');
    expect(results[0]!.result).toMatch(/^x{16000}\n\[truncated: the tool returned 1000000 characters; only the first 16000 are shown\]$/);
    expect(results[1]!.result).toBe('[image image/png]');
    expect([results[2]!.ok, results[2]!.result]).toEqual([true, 'echo still here']);
    wentOn += 3;
  });

  afterAll(() => {
    console.log(
      `hostile mcp: ${modes} fault modes, ${wentOn} tool faults returned to the agent and the run went on, ${clearStops} unstartable server stopped the run with one line, 0 stack traces`,
    );
  });
});
