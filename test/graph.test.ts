// `sop graph`: the Mermaid stateDiagram-v2 of a SOP. Checked two ways: with Mermaid's own parser
// (the full `mermaid` package, a dev dependency of the same version as the `@mermaid-js/tiny`
// bundle `sop view` serves; mermaid.parse runs in Node once its HTML sanitizer, which needs a
// browser DOM and plays no part in parsing, is given no-op hooks), and with a strict grammar of
// the subset we emit.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import DOMPurify from 'dompurify';
import { beforeAll, describe, expect, it } from 'vitest';
import { toMermaid } from '../src/format/sop/graph.js';
import { loadSopFile, validateSopDocument } from '../src/api/loader/checked-load.js';
import type { Sop } from '../src/format/sop/types.js';
import { spawnCliAsync, requireBuiltCli } from './helpers/cli.js';

const ROOT = join(import.meta.dirname, '..');

// Without a window, DOMPurify exports an object without hooks; mermaid registers a hook at parse.
const purify = DOMPurify as unknown as { addHook?: unknown; sanitize?: unknown };
purify.addHook ??= () => {};
purify.sanitize ??= (s: string) => s;
let mermaid: { parse(text: string): Promise<unknown> };
beforeAll(async () => {
  mermaid = (await import('mermaid')).default;
}, 60_000);

function shippedSops(): string[] {
  const files: string[] = [];
  if (existsSync(join(ROOT, 'sops'))) {
    files.push(
      ...readdirSync(join(ROOT, 'sops'))
        .filter((f) => f.endsWith('.json'))
        .map((f) => join(ROOT, 'sops', f)),
    );
  }
  files.push(
    ...(readdirSync(join(ROOT, 'examples'), { recursive: true }) as string[])
      .filter((f) => f.endsWith('.sop.json'))
      .map((f) => join(ROOT, 'examples', f)),
  );
  return files;
}

interface Parsed {
  labels: Map<string, string>;
  start: string[];
  edges: Array<{ from: string; to: string; label?: string }>;
}

/**
 * The stateDiagram-v2 subset `toMermaid` emits, line by line:
 *   stateDiagram-v2 | state "LABEL" as ID | [*] --> ID | ID --> ID : LABEL | ID --> [*]
 * Labels hold no characters that end or split a Mermaid statement or open an HTML tag
 * (other than the <br/> between the lines of a state's box: name, roles, controller, sub-SOP
 * calls). IDs are declared before use.
 */
function strictParse(text: string): Parsed {
  expect(text.endsWith('\n')).toBe(true);
  const lines = text.slice(0, -1).split('\n');
  expect(lines[0]).toBe('stateDiagram-v2');
  const labels = new Map<string, string>();
  const start: string[] = [];
  const edges: Parsed['edges'] = [];
  const ID = '[A-Za-z][A-Za-z0-9_]*';
  const SAFE = /^(?!.*%%)[^"\n\r:;<>]*$/;
  const declared = (id: string) => expect(labels.has(id), `${id} used before "state ... as ${id}"`).toBe(true);
  for (const line of lines.slice(1)) {
    let m: RegExpExecArray | null;
    if ((m = new RegExp(`^    state "([^"]*)" as (${ID})$`).exec(line))) {
      const [, label, id] = m;
      for (const part of label!.split('<br/>')) expect(part, line).toMatch(SAFE);
      expect(label!.split('<br/>').length).toBeLessThanOrEqual(4);
      expect(labels.has(id!), `duplicate id ${id}`).toBe(false);
      labels.set(id!, label!);
    } else if ((m = new RegExp(`^    \\[\\*\\] --> (${ID})$`).exec(line))) {
      declared(m[1]!);
      start.push(m[1]!);
    } else if ((m = new RegExp(`^    (${ID}) --> \\[\\*\\]$`).exec(line))) {
      declared(m[1]!);
      edges.push({ from: m[1]!, to: '[*]' });
    } else if ((m = new RegExp(`^    (${ID}) --> (${ID}) : (.+)$`).exec(line))) {
      declared(m[1]!);
      declared(m[2]!);
      expect(m[3], line).toMatch(SAFE);
      edges.push({ from: m[1]!, to: m[2]!, label: m[3]! });
    } else {
      throw new Error(`line outside the stateDiagram-v2 subset: ${JSON.stringify(line)}`);
    }
  }
  expect(start).toHaveLength(1);
  return { labels, start, edges };
}

/** Check a SOP's diagram both ways and that it shows every state and transition. */
async function checkDiagram(sop: Sop): Promise<Parsed> {
  const text = toMermaid(sop);
  await expect(mermaid.parse(text)).resolves.toMatchObject({ diagramType: 'stateDiagram' });
  const parsed = strictParse(text);
  expect(parsed.labels.size).toBe(Object.keys(sop.states).length);
  // States are declared in document order, so the root's id is its position.
  const rootId = [...parsed.labels.keys()][Object.keys(sop.states).indexOf(sop.root)];
  expect(parsed.start[0]).toBe(rootId);
  // a population state's metric transitions are edges too
  const expected = Object.values(sop.states).reduce(
    (n, s) => n + (s.final ? 1 : Object.keys(s.next_states ?? {}).length + (s.population ? (s.transitions?.length ?? 0) : 0)),
    0,
  );
  expect(parsed.edges).toHaveLength(expected);
  return parsed;
}

describe('sop graph', () => {
  it('the strict checker and Mermaid both reject broken diagrams', async () => {
    for (const bad of ['stateDiagram-v2\n    state "a"b" as s0\n', 'stateDiagram-v2\n    s0 --> --> s1\n']) {
      expect(() => strictParse(bad)).toThrow();
      await expect(mermaid.parse(bad)).rejects.toThrow(/Parse error|Lexical error/);
    }
  });

  it('is a valid stateDiagram-v2 for every shipped SOP', async () => {
    const files = shippedSops();
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) {
      // a SOP naming plugin modules checks against the worlds they register, loaded only with
      // approval (test/models-cli.test.ts draws and runs examples/plugin-world with --yes)
      if ('plugins' in (JSON.parse(readFileSync(file, 'utf8')) as object)) continue;
      const { sop } = loadSopFile(file);
      await checkDiagram(sop).catch((err: Error) => {
        throw new Error(`${relative(ROOT, file)}: ${err.message}`);
      });
    }
  });

  it('labels transitions by judge key, max_turns and single successors', async () => {
    const sop = validateSopDocument(
      {
        name: 'g',
        root: 'a',
        agents: { Ann: { roles: { a: 'R', b: 'R' } } },
        states: {
          a: { roles: ['R'], controller: { max_turns: 4 }, next_states: { '0': 'a', '1': 'b', '2': 'end' } },
          b: { roles: ['R'], next_states: { '0': 'end' } },
          end: { final: true },
        },
      },
      'g.sop.json',
    ).sop;
    const text = toMermaid(sop);
    expect(text).toBe(
      [
        'stateDiagram-v2',
        '    state "a<br/>R<br/>order controller" as s0',
        '    state "b<br/>R<br/>order controller" as s1',
        '    state "end (final)" as s2',
        '    [*] --> s0',
        '    s0 --> s0 : stay (0)',
        '    s0 --> s1 : judge 1 or 4 turns',
        '    s0 --> s2 : judge 2',
        '    s1 --> s2 : next',
        '    s2 --> [*]',
        '',
      ].join('\n'),
    );
    await checkDiagram(sop);
  });

  it("shows each state's controller type, the roles people play and the sub-SOPs its commands call", async () => {
    const sop = validateSopDocument(
      {
        name: 'g',
        root: 'talk',
        agents: {
          Ann: { roles: { talk: 'Host', work: 'Lead' } },
          Bo: { roles: { talk: 'Critic' } },
          You: { human: true, roles: { talk: 'Guest' } },
        },
        states: {
          talk: {
            roles: ['Host', 'Critic', 'Guest'],
            controller: { type: 'rule', speaker: { system_prompt: 'Pick.' } },
            next_states: { '0': 'talk', '1': 'work' },
          },
          work: {
            roles: ['Lead'],
            controller: { max_turns: 9 },
            next_states: { '1': 'end' },
            commands: {
              Coder: { executor: 'sop', description: 'Write code.', settings: { file: '../../sops/coder.sop.json' } },
              finish: { executor: 'finish', description: 'Done.' },
            },
          },
          end: { final: true },
        },
      },
      join(ROOT, 'test', 'fixtures', 'g.sop.json'),
    ).sop;
    const text = toMermaid(sop);
    expect(text).toContain('    state "talk<br/>Host, Critic, Guest (human)<br/>rule controller" as s0\n');
    expect(text).toContain('    state "work<br/>Lead<br/>order controller<br/>calls Coder (../../sops/coder.sop.json)" as s1\n');
    expect(text).toContain('    s1 --> s2 : finish or 9 turns\n');
    await checkDiagram(sop);
    // The shipped Jarvis SOP: its execute state calls the Coder and the plan writer.
    const jarvis = toMermaid(loadSopFile(join(ROOT, 'sops', 'jarvis.sop.json')).sop);
    expect(jarvis).toMatch(
      /state "execute<br\/>Controller<br\/>order controller<br\/>calls Coder \(coder\.sop\.json\), re_plan \(plan_writer\.sop\.json\)"/,
    );
  });

  it('stays valid with hostile state and role names', async () => {
    const names = [
      'say "hi"',
      'a: b; c',
      '<script>x</script>',
      'a %% b',
      "x %%{init: {'theme':'dark'}}%% y",
      'x{y}',
      'a --> b',
      '[*]',
      'end',
      'state',
      'note',
      'direction',
      '#quot',
      'émoji 🎲 中文',
    ];
    const states: Record<string, unknown> = {};
    const agents: Record<string, { roles: Record<string, string> }> = {};
    names.forEach((name, i) => {
      const role = `role ${name}`;
      agents[`Agent${i}`] = { roles: { [name]: role } };
      states[name] = { roles: [role], next_states: { '0': name, '1': names[i + 1] ?? 'the end' } };
    });
    states['the end'] = { final: true };
    const sop = validateSopDocument({ name: 'hostile', root: names[0], agents, states }, 'hostile.sop.json').sop;
    const parsed = await checkDiagram(sop);
    expect([...parsed.labels.values()].join('\n')).not.toMatch(/<(?!br\/>)/);
  });

  it('draws a population state as a population: its agents, world, tier and steps, left by its transitions', async () => {
    const sop = loadSopFile(join(ROOT, 'examples', 'models', 'sir', 'sir.sop.json')).sop;
    const text = toMermaid(sop);
    const parsed = await checkDiagram(sop);
    expect([...parsed.labels.values()][0]).toBe('epidemic<br/>population of people.csv · network world<br/>rule tier · up to 100 steps');
    expect(text).not.toMatch(/controller|judge/);
    expect(parsed.edges.map((e) => e.label)).toEqual(['when infected == 0', 'after 100 steps', undefined]);
  });

  it('the CLI prints the same diagram', async () => {
    requireBuiltCli();
    const file = join(ROOT, 'examples', 'debate', 'debate.sop.json');
    const r = await spawnCliAsync(['graph', file], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toBe(toMermaid(loadSopFile(file).sop));
  });
});
