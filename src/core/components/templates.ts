// The prompt templates of the components' own calls and of Agents 1.0 semantics:
// prompts/agents_v1/*.hbs (wording is ours; structure and order follow Agents 1.0, docs/agents-v1.md).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { compileTemplate, tidy, type Render } from '../prompt/templates.js';
import { packageRoot } from '../../shared/util/package-root.js';

export type V1TemplateName =
  'system' | 'last' | 'observation' | 'concise' | 'extract_last' | 'code_system' | 'code_last' | 'knowledge' | 'tool_result';

const cache = new Map<V1TemplateName, Render>();

export function renderV1(name: V1TemplateName, context: object): string {
  let render = cache.get(name);
  if (!render) {
    const file = join(packageRoot(), 'prompts', 'agents_v1', `${name}.hbs`);
    render = compileTemplate(readFileSync(file, 'utf8'), `prompts/agents_v1/${name}.hbs`);
    cache.set(name, render);
  }
  return tidy(render(context));
}
