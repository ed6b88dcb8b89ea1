// sop graph FILE: the state graph as Mermaid.
import { toMermaid } from '../sop/graph.js';
import { loadSopFile } from '../loader/load.js';

export function graphCommand(file: string): number {
  const { sop } = loadSopFile(file);
  process.stdout.write(toMermaid(sop));
  return 0;
}
