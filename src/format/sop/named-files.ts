// Every file a SOP document names, for the rules that hold for all of them at once (a worker's
// --root: src/apps/sweep/job-policy.ts): a population state's data file (population.source.file)
// and edge list (world.graph.file), a knowledge component's file (components.ROLE.knowledge.path)
// and a sub-flow's SOP file (a `sop` command's settings.file). Each is resolved as its reader
// resolves it: relative to the SOP file's folder unless absolute. A pure function of the
// document: it reads no file (a sub-flow's own files are found by calling it on that SOP).
// A path that names inputs ({{inputs.NAME}}: file-template.ts) is rendered with `inputs` (a run's),
// else with the SOP's input defaults; one that cannot be rendered keeps its text as `resolved`.
import { isAbsolute, resolve } from 'node:path';
import { inputDefaults, isTemplatedPath, renderPathTemplate } from './file-template.js';

export interface NamedFile {
  /** JSON pointer of the path in the document. */
  pointer: string;
  /** What the file is, in words ("population file"). */
  what: string;
  /** The path as written. */
  path: string;
  /** The path resolved against the SOP file's folder. */
  resolved: string;
  /** A sub-flow's SOP file, whose own named files count too. */
  subflow?: boolean;
  /** The path names inputs ({{inputs.NAME}}); `resolved` is rendered with the inputs given (or the defaults). */
  templated?: boolean;
}

const esc = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');
const obj = (v: unknown): Record<string, unknown> | undefined =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;

/** The files `doc` (a SOP, checked or not) names, with the folder its relative paths start from. */
export function namedFiles(doc: unknown, baseDir: string, inputs?: Readonly<Record<string, string>>): NamedFile[] {
  const out: NamedFile[] = [];
  const values = { ...inputDefaults(doc), ...(inputs ?? {}) };
  const add = (pointer: string, what: string, path: unknown, subflow = false, templates = false) => {
    if (typeof path !== 'string' || path === '') return;
    const templated = templates && isTemplatedPath(path);
    const rendered = templated ? renderPathTemplate(path, values) : { path };
    const p = 'path' in rendered ? rendered.path : path;
    out.push({
      pointer,
      what,
      path,
      resolved: isAbsolute(p) ? p : resolve(baseDir, p),
      ...(subflow ? { subflow } : {}),
      ...(templated ? { templated } : {}),
    });
  };
  const states = obj(obj(doc)?.states) ?? {};
  for (const [name, s] of Object.entries(states)) {
    const state = obj(s);
    if (!state) continue;
    const at = `/states/${esc(name)}`;
    add(`${at}/population/source/file`, 'population file', obj(obj(state.population)?.source)?.file, false, true);
    add(`${at}/world/graph/file`, 'edge list file', obj(obj(state.world)?.graph)?.file, false, true);
    for (const [role, c] of Object.entries(obj(state.components) ?? {}))
      add(`${at}/components/${esc(role)}/knowledge/path`, 'knowledge file', obj(obj(c)?.knowledge)?.path);
    for (const [command, c] of Object.entries(obj(state.commands) ?? {})) {
      const def = obj(c);
      if (def?.executor === 'sop') add(`${at}/commands/${esc(command)}/settings/file`, 'sub-flow SOP file', obj(def.settings)?.file, true);
    }
  }
  return out;
}
