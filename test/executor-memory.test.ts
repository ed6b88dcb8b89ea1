// The memory executor and the path rules of the workspace and memory files: "..", absolute
// paths and symbolic links never lead a read or write out of the run's folders.
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { executor as memory } from '../src/features/actions/executors/memory.js';
import { Run } from '../src/api/engine/run-with-features.js';
import { validateSopDocument } from '../src/api/loader/checked-load.js';
import { MemoryError, MemoryFiles } from '../src/core/workspace/memory-files.js';
import { PathEscapeError, resolveInside } from '../src/shared/workspace/safe-path.js';
import { Workspace } from '../src/core/workspace/workspace.js';
import { execContext, tempDir } from './helpers/executor-context.js';
import { ScriptedLlm } from './helpers/scripted-llm.js';

describe('paths inside a folder', () => {
  const root = tempDir('sop-paths-');

  it.each([
    ['../x', '".." is not allowed'],
    ['a/../../x', '".." is not allowed'],
    ['a/..', '".." is not allowed'],
    ['/etc/passwd', 'absolute paths are not allowed'],
    ['C:\\Windows\\x', 'absolute paths are not allowed'],
    ['~/x', 'absolute paths are not allowed'],
    ['', 'empty path'],
    ['./', 'names the folder itself'],
    ['a\0b', 'contains a NUL byte'],
  ])('refuses %j', (path, reason) => {
    expect(() => resolveInside(root, path)).toThrow(PathEscapeError);
    expect(() => resolveInside(root, path)).toThrow(reason);
  });

  it('accepts plain relative paths', () => {
    expect(resolveInside(root, 'sub/dir/file.txt')).toBe(join(root, 'sub', 'dir', 'file.txt'));
    expect(resolveInside(root, './report.md')).toBe(join(root, 'report.md'));
  });

  it('refuses symbolic links, to a folder or to a file, and leaves their targets alone', () => {
    const base = tempDir('sop-links-');
    const outside = join(base, 'outside');
    mkdirSync(outside);
    writeFileSync(join(outside, 'secret.txt'), 'secret');
    const ws = new Workspace(join(base, 'ws')).ensure();
    symlinkSync(outside, join(ws.root, 'dirlink'));
    symlinkSync(join(outside, 'secret.txt'), join(ws.root, 'filelink'));
    expect(() => ws.write('dirlink/new.txt', 'x')).toThrow('"dirlink" is a symbolic link');
    expect(() => ws.write('filelink', 'overwritten')).toThrow('"filelink" is a symbolic link');
    expect(() => ws.read('filelink')).toThrow(PathEscapeError);
    expect(existsSync(join(outside, 'new.txt'))).toBe(false);
    expect(readFileSync(join(outside, 'secret.txt'), 'utf8')).toBe('secret');
  });
});

describe('memory files', () => {
  it('refuses names the SOP does not declare', () => {
    const m = new MemoryFiles({ dir: tempDir(), initial: { plan: '' } }).init();
    expect(() => m.write('secrets', 'x')).toThrow(MemoryError);
    expect(() => m.write('secrets', 'x')).toThrow('unknown memory file "secrets"; this SOP declares: plan, logs');
    expect(() => m.read('../plan')).toThrow('unknown memory file');
  });

  it('refuses to write through a memory file replaced by a symbolic link', () => {
    const dir = tempDir();
    const target = join(tempDir(), 'victim.txt');
    writeFileSync(target, 'untouched');
    const m = new MemoryFiles({ dir, initial: { plan: '' } }).init();
    const planPath = join(dir, 'plan.md');
    writeFileSync(planPath, '');
    // Something (code run unsandboxed, say) swaps the file for a link.
    rmSync(planPath);
    symlinkSync(target, planPath);
    expect(() => m.write('plan', 'pwned')).toThrow(PathEscapeError);
    expect(readFileSync(target, 'utf8')).toBe('untouched');
  });

  it('keeps texts in memory when the run has no folder', () => {
    const m = new MemoryFiles({ initial: { plan: 'p0' } });
    m.append('plan', '+1');
    expect(m.read('plan')).toBe('p0+1');
    expect(m.pathOf('plan')).toBeUndefined();
    expect(m.snapshot()).toEqual({ plan: 'p0+1', logs: '' });
  });
});

describe('memory executor', () => {
  it('writes, appends and reads a memory file', async () => {
    const ctx = execContext();
    await memory.run({ content: '1. a\n2. b' }, { ...ctx, settings: { op: 'write', file: 'plan' } });
    await memory.run({ content: '3. c' }, { ...ctx, settings: { op: 'append', file: 'plan' } });
    const read = await memory.run({ file: 'plan' }, { ...ctx, settings: { op: 'read' } });
    expect(read.result).toBe('1. a\n2. b3. c\n');
    expect(readFileSync(join(ctx.dir, 'memory', 'plan.md'), 'utf8')).toBe('1. a\n2. b3. c\n');
  });

  it('writes workspace files by relative path and refuses escapes', async () => {
    const ctx = execContext();
    const settings = { op: 'write', target: 'workspace' };
    await memory.run({ file: 'notes/today.md', content: 'hello' }, { ...ctx, settings });
    expect(readFileSync(join(ctx.ws.root, 'notes', 'today.md'), 'utf8')).toBe('hello');
    await expect(memory.run({ file: '../escape.md', content: 'x' }, { ...ctx, settings })).rejects.toThrow(PathEscapeError);
    await expect(memory.run({ file: join(ctx.dir, 'abs.md'), content: 'x' }, { ...ctx, settings })).rejects.toThrow(
      'absolute paths are not allowed',
    );
    expect(existsSync(join(ctx.dir, 'escape.md'))).toBe(false);
    expect(existsSync(join(ctx.dir, 'abs.md'))).toBe(false);
  });

  it('tells the agent a refused path in a run, which goes on', async () => {
    const dir = tempDir('sop-escape-');
    const { sop } = validateSopDocument(
      {
        name: 'escape',
        environment: { summary: { enabled: false } },
        agents: { Ann: { roles: { s: 'R' } } },
        root: 's',
        states: {
          s: {
            roles: ['R'],
            commands: { save_file: { executor: 'memory', settings: { op: 'write', target: 'workspace' } }, finish: { executor: 'finish' } },
            next_states: { 1: 'end' },
          },
          end: { final: true },
        },
      },
      'escape.sop.json',
    );
    const cmd = (file: string) => JSON.stringify({ command: 'save_file', command_args: { file, content: 'x' } });
    const llm = new ScriptedLlm({
      agent: [
        cmd('../../outside.txt'),
        cmd('/tmp/abs-outside.txt'),
        cmd('inside.txt'),
        '{"command": "finish", "command_args": {"result": "ok"}}',
      ],
    });
    const result = await new Run({ sop, file: 'escape.sop.json', llm, actions: { runDir: dir, workspace: join(dir, 'workspace') } }).run();
    expect(result.status).toBe('finished');
    const actions = result.messages.filter((m) => m.kind === 'action').map((m) => m.content);
    expect(actions[0]).toBe('The command save_file could not be carried out: path "../../outside.txt" refused: ".." is not allowed');
    expect(actions[1]).toBe(
      'The command save_file could not be carried out: path "/tmp/abs-outside.txt" refused: absolute paths are not allowed; give a path relative to the folder',
    );
    expect(actions[2]).toBe('Wrote workspace file "inside.txt" (1 characters).');
    expect(existsSync(join(dir, '..', 'outside.txt'))).toBe(false);
    expect(existsSync('/tmp/abs-outside.txt')).toBe(false);
    expect(readFileSync(join(dir, 'memory', 'logs.md'), 'utf8')).toContain(
      '- [turn 1] save_file (failed): failed: path "../../outside.txt" refused',
    );
  });
});
