// `sop validate` as a user runs it: the built CLI in a child process, on files in a temp dir.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { syntaxErrorOffset } from '../src/format/sop/json-source.js';
import { spawnCliAsync, requireBuiltCli } from './helpers/cli.js';

const ROOT = join(import.meta.dirname, '..');
let dir: string;

beforeAll(() => {
  requireBuiltCli();
  dir = mkdtempSync(join(tmpdir(), 'sop-validate-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function sop(cli: string[]) {
  const r = await spawnCliAsync([...cli], { cwd: ROOT, encoding: 'utf8', env: { ...process.env, SOP_DEBUG: '' } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr, lines: r.stderr.split('\n').filter(Boolean) };
}

function write(name: string, content: string | object): string {
  const file = join(dir, name);
  writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content, null, 2) + '\n');
  return file;
}

/** A valid SOP to break: Ann plays RA in s, which leads to end. */
function base(): Record<string, any> {
  return {
    name: 't',
    agents: { Ann: { roles: { s: 'RA' } } },
    root: 's',
    states: { s: { roles: ['RA'], next_states: { '0': 's', '1': 'end' } }, end: { final: true } },
  };
}

const LINE = /^(.+?):(\d+):(\d+): (\/\S*): (.+)$/;

// The bad files are written up front and validated by one `sop validate` call (one process
// start instead of one per case); each case then reads the lines naming its file.
const batch = new Map<string, string>();
let batchRun: Awaited<ReturnType<typeof sop>>;
function bad(name: string, content: string | object): string {
  batch.set(name, typeof content === 'string' ? content : JSON.stringify(content, null, 2) + '\n');
  return name;
}

function brokenDoc(change: (doc: Record<string, any>) => void): Record<string, any> {
  const doc = base();
  change(doc);
  return doc;
}

const CASES = {
  wrongType: bad(
    'wrong-type.json',
    brokenDoc((d) => {
      d.states.s.roles = 'RA';
    }),
  ),
  dangling: bad(
    'dangling.json',
    brokenDoc((d) => {
      d.states.s.next_states['1'] = 'nowhere';
    }),
  ),
  beginRole: bad(
    'begin-role.json',
    brokenDoc((d) => {
      d.states.s.begin_role = 'RZ';
    }),
  ),
  twoPlayers: bad(
    'two-players.json',
    brokenDoc((d) => {
      d.agents.Ben = { roles: { s: 'RA' } };
    }),
  ),
  noPlayer: bad(
    'no-player.json',
    brokenDoc((d) => {
      d.states.s.roles = ['RA', 'RB'];
    }),
  ),
  noFinal: bad(
    'no-final.json',
    brokenDoc((d) => {
      d.states.s.next_states = { '0': 's' };
    }),
  ),
  proto: bad(
    'proto.json',
    JSON.stringify(base(), null, 2).replace('"end": {', '"__proto__": { "roles": ["RA"], "next_states": { "0": "end" } },\n    "end": {'),
  ),
  root: bad(
    'root.json',
    brokenDoc((d) => {
      d.root = 'nope';
    }),
  ),
  unknownKey: bad(
    'key.json',
    brokenDoc((d) => {
      d.states.s.begin_qeury = 'typo';
    }),
  ),
  cassette: bad('bad.cassette.json', {
    version: 1,
    source: 'hand-written',
    interactions: [
      { purpose: 'agent', response: 'hi' },
      { purpose: 'jduge', response: '1' },
    ],
  }),
};

const SYNTAX: Array<[string, string, number, number]> = [
  ['missing colon', '{\n  "name": "t",\n  "agents" {}\n}\n', 3, 12],
  ['trailing comma', '{\n  "name": "t",\n}\n', 3, 1],
  ['bare word', '{\n  "name": x\n}\n', 2, 11],
  ['unclosed', '{\n  "name": "t"\n', 3, 1],
  ['empty file', '', 1, 1],
  ['text after the value', '{}\n\n  more', 3, 3],
];
for (const [name, text] of SYNTAX) bad(`broken-${name.replace(/ /g, '-')}.json`, text);

beforeAll(async () => {
  for (const [name, text] of batch) writeFileSync(join(dir, name), text);
  batchRun = await sop(['validate', ...[...batch.keys()].map((n) => join(dir, n))]);
});

/** The one error line of a bad file in the batch run, split into its parts. */
function errorOf(name: string) {
  const file = join(dir, name);
  const lines = batchRun.lines.filter((l) => l.startsWith(`${file}:`) && !/: warning: /.test(l));
  expect(lines, batchRun.stderr).toHaveLength(1);
  const m = LINE.exec(lines[0]!);
  expect(m, `not FILE:LINE:COL: /pointer: message: ${lines[0]}`).not.toBeNull();
  return { file: m![1], line: Number(m![2]), column: Number(m![3]), pointer: m![4], message: m![5] };
}

describe('sop validate: one-line errors with file, position and JSON pointer', () => {
  it('exits 1 with no stack trace, one error line per bad file, and checks every file', () => {
    expect(batchRun.code).toBe(1);
    expect(batchRun.stderr).not.toContain('    at ');
    expect(batchRun.stdout).toContain(`0 of ${batch.size} files valid`);
    for (const name of batch.keys()) errorOf(name);
  });

  it('a single bad file also exits 1 with a single line', async () => {
    const r = await sop(['validate', join(dir, CASES.wrongType)]);
    expect(r.code).toBe(1);
    expect(r.lines).toHaveLength(1);
    expect(r.lines[0]).toMatch(LINE);
    const broken = await sop(['validate', join(dir, 'broken-bare-word.json')]);
    expect(broken.code).toBe(1);
    expect(broken.lines).toEqual([`${join(dir, 'broken-bare-word.json')}:2:11: /: invalid JSON: Unexpected character`]); // never the file's bytes
  });

  it('a wrong type', () => {
    const e = errorOf(CASES.wrongType);
    expect(e.file).toBe(join(dir, CASES.wrongType));
    expect(e.pointer).toBe('/states/s/roles');
    expect(e.message).toMatch(/must be a list/);
    expect(e.line).toBe(13); // where JSON.stringify(doc, null, 2) puts "roles" of s
  });

  it('a dangling next_states target', () => {
    const e = errorOf(CASES.dangling);
    expect(e.pointer).toBe('/states/s/next_states/1');
    expect(e.message).toMatch(/"nowhere" is not defined/);
  });

  it('an unknown begin_role', () => {
    const e = errorOf(CASES.beginRole);
    expect(e.pointer).toBe('/states/s/begin_role');
    expect(e.message).toMatch(/"RZ" is not one of the state's roles/);
  });

  it.each(SYNTAX)('broken JSON (%s) gets line and column', (name, _text, line, column) => {
    const e = errorOf(`broken-${name.replace(/ /g, '-')}.json`);
    expect(e.pointer).toBe('/');
    expect(e.message).toMatch(/^invalid JSON: /);
    expect({ line: e.line, column: e.column }).toEqual({ line, column });
    expect(e.message).not.toMatch(/position \d+/);
  });

  it('a role played by two agents', () => {
    const e = errorOf(CASES.twoPlayers);
    expect(e.pointer).toBe('/states/s/roles');
    expect(e.message).toMatch(/"RA" is played by 2 agents \(Ann, Ben\)/);
  });

  it('a role played by nobody', () => {
    const e = errorOf(CASES.noPlayer);
    expect(e.pointer).toBe('/states/s/roles');
    expect(e.message).toMatch(/"RB" is played by no agent/);
  });

  it('no reachable final state', () => {
    const e = errorOf(CASES.noFinal);
    expect(e.pointer).toBe('/states');
    expect(e.message).toMatch(/no final state is reachable/);
  });

  it('a __proto__ state name', () => {
    const e = errorOf(CASES.proto);
    expect(e.pointer).toBe('/states/__proto__');
    expect(e.message).toMatch(/reserved name/);
  });

  it('an unknown root and an unknown key', () => {
    expect(errorOf(CASES.root)).toMatchObject({ pointer: '/root' });
    expect(errorOf(CASES.unknownKey)).toMatchObject({ pointer: '/states/s/begin_qeury', message: expect.stringMatching(/unknown key/) });
  });

  it('a broken cassette is reported at its pointer', () => {
    const e = errorOf(CASES.cassette);
    expect(e.pointer).toBe('/interactions/1/purpose');
    expect(e.message).toMatch(/cassette: must be one of/);
  });

  it('a missing file and a directory are one-line errors too', async () => {
    mkdirSync(join(dir, 'folder.json'), { recursive: true });
    const r = await sop(['validate', join(dir, 'nope.json'), join(dir, 'folder.json')]);
    expect(r.code).toBe(1);
    expect(r.lines).toEqual([
      `${join(dir, 'nope.json')}: /: file not found`,
      `${join(dir, 'folder.json')}: /: is a directory, not a SOP file`,
    ]);
  });

  it('good files pass next to a bad one; only bad ones fail', async () => {
    const good = write('good.json', base());
    const r = await sop(['validate', good, join(dir, CASES.beginRole), good]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(`${good}: ok`);
    expect(r.stdout).toContain('2 of 3 files valid');
    expect(r.lines).toHaveLength(1);
    expect(r.lines[0]).toContain(CASES.beginRole);
    const ok = await sop(['validate', good]);
    expect(ok.code).toBe(0);
    expect(ok.stderr).toBe('');
  });
});

describe('sop validate on the shipped files', () => {
  it('passes for sops/*.json and examples/**/*.json (SOPs and cassettes)', async () => {
    const files: string[] = [];
    if (existsSync(join(ROOT, 'sops'))) {
      files.push(
        ...readdirSync(join(ROOT, 'sops'))
          .filter((f) => f.endsWith('.json'))
          .map((f) => join('sops', f)),
      );
    }
    files.push(
      ...(readdirSync(join(ROOT, 'examples'), { recursive: true }) as string[])
        .filter((f) => f.endsWith('.json'))
        .map((f) => relative(ROOT, join(ROOT, 'examples', f))),
    );
    expect(files.some((f) => f.endsWith('.sop.json'))).toBe(true);
    // --yes: examples/plugin-world names a module of this repository (docs/population.md#plugins)
    const r = await sop(['validate', '--yes', ...files]);
    expect(r.stderr.split('\n').filter((l) => l && !/: warning: /.test(l))).toEqual([]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`${files.length} of ${files.length} files valid`);
  });
});

describe('syntaxErrorOffset', () => {
  it('agrees with JSON.parse where JSON.parse gives a position', () => {
    const broken = ['{"a" 1}', '{"a": 1,}', '[1,2', '{"a": "b\n"}', '[1] x', '{a: 1}', '{"x": [1, 2 3]}', '"abc'];
    for (const text of broken) {
      let message = '';
      try {
        JSON.parse(text);
      } catch (err) {
        message = (err as Error).message;
      }
      const at = /position (\d+)/.exec(message);
      expect(at, message).not.toBeNull();
      expect(syntaxErrorOffset(text), text).toBe(Number(at![1]));
    }
    expect(syntaxErrorOffset('{"a": [1, true, null, "x\\u00e9", -1.5e3]}')).toBeUndefined();
  });
});
