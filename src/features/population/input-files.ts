// The data files of a population state that name the run's inputs (`source.file`,
// `world.graph.file` with {{inputs.NAME}}: src/format/sop/file-template.ts), rendered when a
// visit starts; an input without a value is a one-line error at the path's pointer.
import { EngineError } from '../../shared/errors.js';
import { isTemplatedPath, renderPathTemplate } from '../../format/sop/file-template.js';
import type { PopulationSpec } from './types.js';

/** A path that names inputs ({{inputs.NAME}}) rendered with the run's (src/format/sop/file-template.ts). */
export function inputFilePath(path: string, inputs: Readonly<Record<string, string>>, pointer: string): string {
  if (!isTemplatedPath(path)) return path;
  const r = renderPathTemplate(path, inputs);
  if ('problem' in r) throw new EngineError(`${pointer}: ${r.problem}`, 'POPULATION');
  return r.path;
}

/** The population spec with its data file's path rendered with the run's inputs. */
export function withInputFile(p: PopulationSpec, inputs: Readonly<Record<string, string>>, pointer: string) {
  if (!('file' in p.source)) return p;
  const file = inputFilePath(p.source.file, inputs, pointer);
  return file === p.source.file ? p : { ...p, source: { ...p.source, file } };
}
