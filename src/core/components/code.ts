// The code component: before the role answers, one LLM call extracts the complete code from the
// conversation; it is written to output_code/FILE inside the run's workspace (never elsewhere).
import { extractTag } from '../../shared/util/tags.js';
import { renderV1 } from './templates.js';
import type { ComponentKind, LastPart } from './registry.js';

interface CodeDef {
  file: string;
  keyword?: string;
}

/** The code without a leading fence line (```python or ```) and a trailing ``` line. */
export function stripCodeFence(code: string): string {
  const lines = code.split('\n');
  if (lines.length > 0 && /^```[A-Za-z0-9_+-]*\s*$/.test(lines[0]!)) lines.shift();
  if (lines.length > 0 && /^```\s*$/.test(lines[lines.length - 1]!)) lines.pop();
  return lines.join('\n');
}

export const code: ComponentKind = {
  async before(value, rt): Promise<LastPart[]> {
    const def = value as CodeDef;
    const keyword = def.keyword ?? 'code';
    const reply = await rt.callWithHistory(renderV1('code_system', {}), renderV1('code_last', { keyword }), 'code');
    const text = stripCodeFence(extractTag(reply, keyword) ?? reply.trim());
    if (!rt.writeWorkspaceFile(`output_code/${def.file}`, text.endsWith('\n') ? text : text + '\n')) {
      rt.warnOnce(
        `code component of ${rt.agent.name} (${rt.agent.role}): the run has no workspace folder, so output_code/${def.file} was not written`,
      );
    }
    return [];
  },
};
