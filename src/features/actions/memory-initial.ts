// The initial contents of memory files are templates over the run's inputs: "mission": "{{goal}}"
// gives the scientist its mission as a memory file (seed 003), which it reads like any other.
import { renderText } from '../../core/prompt/templates.js';

export function initialMemory(memory: Record<string, string>, inputs: Record<string, string> = {}): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, text] of Object.entries(memory)) out[name] = renderText(text, { inputs, goal: inputs.goal }, `/memory/${name}`);
  return out;
}

/** The memory files whose initial content is a template (made from the inputs): with --memory-dir, they follow a new run's inputs. */
export function inputMadeMemory(memory: Record<string, string>): string[] {
  return Object.entries(memory)
    .filter(([, text]) => text.includes('{{'))
    .map(([name]) => name);
}
