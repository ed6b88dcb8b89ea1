// A tool call is journaled as an effect and never repeated on resume: a real `sop run` is killed
// (SIGKILL) after an MCP tool call, while it waits for the LLM's next reply (the test server holds
// it: the kill lands at that point every time, however fast the machine), `sop resume` finishes
// it, and the notes server has seen each call once. And Ctrl-C closes the servers a run started.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startOpenAiServer, type TestServer } from './helpers/openai-server.js';
import { cmd, journal, notesServer, onlyRun, serverCalls, tempDir, toolSop, writeSop } from './helpers/mcp-notes.js';
import { spawnCli } from './helpers/cli.js';

/** Run the CLI to its end. */
function cli(
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ code: number | null; signal: string | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawnCli([...args], { stdio: ['ignore', 'ignore', 'pipe'], env });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stderr }));
  });
}

describe('MCP tool calls on resume', () => {
  let llm: TestServer | undefined;
  afterEach(async () => {
    await llm?.close();
    llm = undefined;
  });

  it('are not made again after a SIGKILL: the journaled result is reused', async () => {
    const dir = tempDir();
    // The LLM: add a note; then hold the next request (the run waits there, the note added and
    // journaled) until the test has killed the run; then, for the resumed run, list and finish.
    let held!: () => void;
    const waiting = new Promise<void>((r) => (held = r));
    const calls = [
      [{ name: 'notes__add_note', arguments: '{"title": "Once", "text": "Added exactly once."}' }],
      undefined,
      [{ name: 'notes__list_notes', arguments: '{}' }],
      [{ name: 'finish', arguments: '{"result": "one note"}' }],
    ];
    llm = await startOpenAiServer({
      toolCalls: (_b, i) => calls[i],
      fault: (i) => (i === 1 ? { kind: 'stall' } : undefined),
      onRequest: (i) => {
        if (i === 1) held(); // the readiness signal: the add_note turn is over, the run waits on the LLM
      },
    });
    const { file } = writeSop(dir, toolSop({ notes: notesServer(dir) }, ['notes/*']), []);
    const out = join(dir, 'runs');
    const env = { ...process.env, OPENAI_API_KEY: 'test' };
    const child = spawnCli(['run', file, '--llm', 'openai', '--base-url', llm.url, '--yes', '--no-sandbox', '--quiet', '--out', out], {
      stdio: ['ignore', 'ignore', 'pipe'],
      env,
    });
    const killed = new Promise<string | null>((r) => child.on('close', (_code, signal) => r(signal)));
    await waiting;
    child.kill('SIGKILL');
    expect(await killed).toBe('SIGKILL');
    expect(serverCalls(dir).map((c) => c.tool)).toEqual(['add_note']);
    const runDir = onlyRun(out);

    const resumed = await cli(['resume', runDir, '--quiet'], env);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(serverCalls(dir).filter((c) => c.tool === 'add_note')).toHaveLength(1);
    expect(serverCalls(dir).filter((c) => c.tool === 'list_notes')).toHaveLength(1);
    expect(JSON.parse(readFileSync(join(dir, 'notes.json'), 'utf8'))).toHaveLength(1);
    const events = journal(runDir);
    expect(events.some((e) => e.type === 'run_finished')).toBe(true);
    // whether the kill came before or after the turn's checkpoint, the call was not started again
    const after = events.slice(events.findIndex((e) => e.type === 'resumed'));
    expect(after.some((e) => e.type === 'effect_started' && e.label === 'notes__add_note@work')).toBe(false);
    expect(readFileSync(join(runDir, 'transcript.md'), 'utf8')).toContain('added note #1 "Once"');
  });

  it('a resume from just after the call returned reuses its journaled result', async () => {
    // A SIGKILL lands wherever the process is; to resume from exactly after the call (before its
    // turn's checkpoint) every time, the journal of a finished run is cut right after the call's
    // effect_finished line, which is what such a kill leaves (the journal is append-only).
    const dir = tempDir();
    const { file, cassette } = writeSop(dir, toolSop({ notes: notesServer(dir) }, ['notes/*']), [
      cmd('notes__add_note', { title: 'Once', text: 'Added exactly once.' }),
      cmd('notes__list_notes'),
      cmd('finish', { result: 'one note' }),
    ]);
    const out = join(dir, 'runs');
    expect((await cli(['run', file, '--llm', `replay:${cassette}`, '--yes', '--no-sandbox', '--quiet', '--out', out])).code).toBe(0);
    const runDir = onlyRun(out);
    const lines = readFileSync(join(runDir, 'journal.jsonl'), 'utf8').split('\n').filter(Boolean);
    const cut = lines.findIndex((l) => {
      const e = JSON.parse(l) as { type: string; key?: string };
      return (
        e.type === 'effect_finished' &&
        lines.some((m) => m.includes('"effect_started"') && m.includes(`"${e.key}"`) && m.includes('notes__add_note'))
      );
    });
    expect(cut).toBeGreaterThan(0);
    writeFileSync(join(runDir, 'journal.jsonl'), lines.slice(0, cut + 1).join('\n') + '\n');

    const resumed = await cli(['resume', runDir, '--quiet']);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(serverCalls(dir).filter((c) => c.tool === 'add_note')).toHaveLength(1);
    expect(JSON.parse(readFileSync(join(dir, 'notes.json'), 'utf8'))).toHaveLength(1);
    const events = journal(runDir);
    const after = events.slice(events.findIndex((e) => e.type === 'resumed'));
    expect(after.some((e) => e.type === 'executor_result' && e.command === 'notes__add_note' && e.ok)).toBe(true);
    expect(after.some((e) => e.type === 'effect_started' && e.label === 'notes__add_note@work')).toBe(false);
    expect(after.some((e) => e.type === 'run_finished')).toBe(true);
  });
});

describe('MCP servers and Ctrl-C', () => {
  let llm: TestServer | undefined;
  afterEach(async () => {
    await llm?.close();
    llm = undefined;
  });

  it('a run stopped with Ctrl-C closes its servers', async () => {
    const dir = tempDir();
    let arrived!: () => void;
    const second = new Promise<void>((r) => (arrived = r));
    llm = await startOpenAiServer({
      toolCalls: (_b, i) => (i === 0 ? [{ name: 'notes__list_notes', arguments: '{}' }] : undefined),
      fault: (i) => (i === 1 ? { kind: 'stall' } : undefined), // the run then waits on the LLM
      onRequest: (i) => {
        if (i === 1) arrived();
      },
    });
    const { file } = writeSop(dir, toolSop({ notes: notesServer(dir) }, ['notes/*']), []);
    const child = spawnCli(
      [
        'run',
        file,
        '--llm',
        'openai',
        '--base-url',
        llm.url,
        '--allow-mcp',
        'notes',
        '--no-sandbox',
        '--out',
        join(dir, 'runs'),
        '--quiet',
      ],
      {
        stdio: ['ignore', 'ignore', 'pipe'],
        env: { ...process.env, OPENAI_API_KEY: 'test' },
      },
    );
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const exited = new Promise<number | null>((r) => child.on('close', (code) => r(code)));
    await second;
    const [call] = serverCalls(dir) as Array<{ tool: string; pid?: number }>;
    expect(call!.tool).toBe('list_notes');
    child.kill('SIGINT');
    expect(await exited, stderr).toBe(130);
    let alive = true;
    try {
      process.kill(call!.pid!, 0);
    } catch {
      alive = false;
    }
    expect(alive).toBe(false);
  });
});
