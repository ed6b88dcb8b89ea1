// Import an Agents 1.0 config and validate the result like any SOP. Problems the SOP checks find
// are reported at the matching key of the original file, so every diagnostic points into the
// file the user wrote.
import { SopError, type Diagnostic } from '../../format/sop/diagnostics.js';
import { locatePointer } from '../../format/sop/json-source.js';
import { validateSopDocument } from '../../format/sop/sop-file.js';
import { SOP_CHECKS } from './checks.js';
import type { Sop } from '../../format/sop/types.js';
import { importAgentsV1, type ImportOptions } from '../../features/agents-v1/import/agents-v1.js';

export interface ImportedSop {
  sop: Sop;
  file: string;
  /** Import warnings and SOP-check warnings, pointing into the original config. */
  warnings: Diagnostic[];
}

const seg = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');
const unseg = (s: string) => s.replace(/~1/g, '/').replace(/~0/g, '~');

/** The key of the Agents 1.0 config that a pointer into the imported SOP came from. */
export function originalPointer(pointer: string): string {
  const parts = pointer === '' ? [] : pointer.slice(1).split('/').map(unseg);
  const out = (...p: string[]) => '/' + p.map(seg).join('/');
  if (parts[0] === 'states' && parts.length >= 2) {
    const [, state, key, sub] = parts as [string, string, string | undefined, string | undefined];
    if (key === 'components' && sub !== undefined) return out('states', state, 'agent_states', sub);
    if (key === 'next_states') return sub !== undefined ? out('relations', state, sub) : out('relations', state);
    if (key === 'controller' && sub === 'max_turns') return out('states', state, 'controller', 'max_chat_nums');
    if (key === 'controller') return out('states', state, 'controller');
    if (key === 'roles' || key === 'begin_role' || key === 'begin_query' || key === 'environment_prompt') return out('states', state, key);
    return out('states', state);
  }
  if (parts[0] === 'environment') return out('config');
  if (parts[0] === 'agents' && parts.length >= 2)
    return parts[2] === 'roles' && parts[3] ? out('agents', parts[1]!, 'roles', parts[3]) : out('agents', parts[1]!);
  if (parts[0] === 'root') return '/root';
  return parts.length > 0 && parts[0] === 'states' ? '/states' : '';
}

function place(diags: Diagnostic[], file: string, text: string | undefined, mapPointers: boolean): Diagnostic[] {
  return diags.map((d) => {
    const pointer = mapPointers ? originalPointer(d.pointer) : d.pointer;
    let position = text === undefined ? undefined : locatePointer(text, pointer);
    if (!position && text !== undefined && pointer) position = locatePointer(text, pointer.slice(0, pointer.lastIndexOf('/')));
    return { ...d, pointer, file, position };
  });
}

/**
 * Convert and validate. Throws SopError (with positions in `text` when given) if the config
 * cannot be imported or the result is not a valid SOP.
 */
export function importAndValidate(doc: unknown, options: ImportOptions, text?: string): ImportedSop {
  const file = options.file;
  let imported;
  try {
    imported = importAgentsV1(doc, options);
  } catch (err) {
    if (err instanceof SopError) throw new SopError(place(err.diagnostics, file, text, false));
    throw err;
  }
  const warnings = place(imported.warnings, file, text, false);
  let checked;
  try {
    checked = validateSopDocument(imported.sop, file, undefined, SOP_CHECKS);
  } catch (err) {
    if (err instanceof SopError) throw new SopError([...warnings, ...place(err.diagnostics, file, text, true)]);
    throw err;
  }
  // A SOP check that repeats what the import already said at the same key adds nothing.
  const said = new Set(warnings.map((w) => w.pointer));
  for (const w of place(checked.warnings, file, text, true)) {
    if (!said.has(w.pointer)) warnings.push(w);
  }
  return { sop: imported.sop, file, warnings };
}
