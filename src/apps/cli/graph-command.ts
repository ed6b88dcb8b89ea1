// sop graph FILE: the state graph as Mermaid.
import { toMermaid } from '../../format/sop/graph.js';
import { loadSopFile } from '../../api/loader/checked-load.js';
import { resolveSopArg } from './builtin-sops.js';

export function graphCommand(file: string): number {
  const { sop } = loadSopFile(resolveSopArg(file));
  process.stdout.write(toMermaid(sop));
  return 0;
}
