// What `sop run` refuses when it starts, checked by `sop validate` without running anything:
// commands compiled against the SOP file's folder (sub-flow files that are missing or not SOPs,
// `args` naming arguments a command does not have), recursively through every sub-flow, the
// embedder spec, the model files of `llm.provider: "local"`, and (agents-v1) knowledge base files. The checks of the SOP document alone are in src/format/sop (sop-file.ts, check-static.ts).
import { statSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { CommandConfigError, compileCommand } from '../../core/commands/commands.js';
import { subflowFile } from '../../features/actions/executors/sop.js';
import { parseEmbedderSpec } from '../../core/memory/create-embedder.js';
import { SopError, type Diagnostic } from '../../format/sop/diagnostics.js';
import { pointerOf } from '../../format/sop/json-source.js';
import { loadSopFile } from '../../api/loader/checked-load.js';
import { BUILTIN_EXECUTORS } from '../../api/loader/executors.js';
import type { Sop } from '../../format/sop/types.js';

export function startupDiagnostics(sop: Sop, file: string, seen: Set<string> = new Set()): Diagnostic[] {
  const out: Diagnostic[] = [];
  const self = resolve(file);
  seen.add(self);
  try {
    parseEmbedderSpec(sop.environment?.embedder);
  } catch (err) {
    out.push({ severity: 'error', pointer: '/environment/embedder', message: (err as Error).message });
  }
  const baseDir = dirname(self);
  out.push(...localModelDiagnostics(sop, baseDir));
  for (const [stateName, state] of Object.entries(sop.states)) {
    // agents-v1: a knowledge base file is read at the role's first turn
    for (const [role, comps] of Object.entries(state.components ?? {})) {
      const path = (comps as { knowledge?: { path?: unknown } }).knowledge?.path;
      if (!sop.agents_v1 || typeof path !== 'string') continue;
      const kb = resolve(baseDir, path);
      const problem = fileProblem(kb, 'is not a regular file');
      if (problem)
        out.push({
          severity: 'error',
          pointer: pointerOf(['states', stateName, 'components', role, 'knowledge', 'path']),
          message: `knowledge file ${relative(baseDir, kb) || kb} ${problem}`,
        });
    }
    for (const [name, def] of Object.entries(state.commands ?? {})) {
      try {
        compileCommand(stateName, name, def, { baseDir, loadSop: (f) => loadSopFile(f).sop, executors: BUILTIN_EXECUTORS });
      } catch (err) {
        if (!(err instanceof CommandConfigError)) throw err;
        out.push({ severity: 'error', pointer: err.pointer, message: err.message });
        continue;
      }
      if (def.executor !== 'sop') continue;
      // The sub-flow loads (compileCommand read it); what its own start would refuse, too.
      const sub = subflowFile(def.settings ?? {}, baseDir);
      if (seen.has(sub)) continue;
      let inner: Diagnostic[];
      try {
        inner = startupDiagnostics(loadSopFile(sub).sop, sub, seen);
      } catch (err) {
        if (!(err instanceof SopError)) throw err;
        inner = err.diagnostics;
      }
      for (const d of inner.filter((x) => x.severity === 'error')) {
        out.push({
          severity: 'error',
          pointer: pointerOf(['states', stateName, 'commands', name, 'settings', 'file']),
          message: `sub-flow ${relative(baseDir, sub) || sub}: ${d.pointer || '/'}: ${d.message}`,
        });
      }
    }
  }
  return out;
}

/**
 * `llm.provider: "local"`: every LLM block's model is a GGUF file (relative to the SOP's folder)
 * or an hf: model; the top-level block names one (the run loads it before it starts).
 */
function localModelDiagnostics(sop: Sop, baseDir: string): Diagnostic[] {
  if (sop.llm?.provider !== 'local') return [];
  const out: Diagnostic[] = [];
  if (sop.llm.model === undefined)
    out.push({
      severity: 'error',
      pointer: '/llm',
      message: 'llm.provider "local" needs llm.model: a .gguf file (relative to the SOP\'s folder) or hf:USER/REPO/FILE.gguf',
    });
  const visit = (v: unknown, path: string[]): void => {
    if (typeof v !== 'object' || v === null) return;
    if (Array.isArray(v)) return v.forEach((x, i) => visit(x, [...path, String(i)]));
    const o = v as Record<string, unknown>;
    if (path.at(-1) === 'llm' && typeof o.model === 'string' && !o.model.startsWith('hf:')) {
      const file = resolve(baseDir, o.model);
      const problem = fileProblem(file, 'is not a file');
      if (problem)
        out.push({
          severity: 'error',
          pointer: pointerOf([...path, 'model']),
          message: `local model file ${o.model} ${problem} (llm.provider "local" reads it from the SOP's folder)`,
        });
    }
    for (const [k, x] of Object.entries(o)) if (k !== 'inputs' && k !== 'templates') visit(x, [...path, k]);
  };
  visit(sop, []);
  return out;
}

/** Why a file named by the SOP cannot be read ("not found", `notFile`, "cannot be read (CODE)"), or undefined. */
function fileProblem(path: string, notFile: string): string | undefined {
  try {
    return statSync(path).isFile() ? undefined : notFile;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return code === 'ENOENT' ? 'not found' : `cannot be read (${code})`;
  }
}
