// LLM blocks of an Agents 1.0 config (`LLM_type`, `LLM`, `log_path`, at top level, per state and
// per role) turned into SOP `llm` settings.
import type { LlmSettings } from '../../../format/sop/types.js';
import type { ImportLog, KeyPath } from './import-log.js';
import { isObject } from '../../../shared/util/is-object.js';

/** The model and temperature Agents 1.0 used when an LLM block leaves them out. */
export const V1_DEFAULT_LLM = { model: 'gpt-3.5-turbo-16k-0613', temperature: 0.3 } as const;

/**
 * Read `LLM_type`, `LLM` and `log_path` from `holder` (at `path`). Returns the settings the block
 * gives (undefined when it gives none); `what` names the block's use in warnings.
 */
export function readLlmBlock(holder: Record<string, unknown>, path: KeyPath, log: ImportLog): LlmSettings | undefined {
  const type = holder.LLM_type;
  if (type !== undefined && type !== 'OpenAI') {
    log.warn(
      [...path, 'LLM_type'],
      `"${String(type)}" was not supported by Agents 1.0 (only "OpenAI"); sop uses the provider chosen with --llm (any OpenAI-compatible server, mock, or a cassette)`,
    );
  }
  if (holder.log_path !== undefined) {
    log.warnOnce(
      'log_path',
      [...path, 'log_path'],
      'log_path is not carried: every LLM call is recorded in the run folder (journal.jsonl)',
    );
  }
  const block = holder.LLM;
  if (block === undefined) return undefined;
  if (!isObject(block)) {
    log.warn([...path, 'LLM'], 'must be an object {model, temperature}; not carried');
    return undefined;
  }
  const out: LlmSettings = {};
  for (const [key, value] of Object.entries(block)) {
    const at = [...path, 'LLM', key];
    if (key === 'model') {
      if (typeof value === 'string' && value !== '') out.model = value;
      else log.warn(at, 'must be a model name; not carried');
    } else if (key === 'temperature') {
      if (typeof value === 'number' && value >= 0 && value <= 2) out.temperature = value;
      else log.warn(at, 'must be a number between 0 and 2; not carried');
    } else if (key === 'log_path') {
      log.warnOnce('log_path', at, 'log_path is not carried: every LLM call is recorded in the run folder (journal.jsonl)');
    } else {
      log.warn(at, 'unknown LLM setting; not carried');
    }
  }
  // A block without a model or temperature still means the Agents 1.0 defaults.
  return { model: out.model ?? V1_DEFAULT_LLM.model, temperature: out.temperature ?? V1_DEFAULT_LLM.temperature };
}

export function sameLlm(a: LlmSettings | undefined, b: LlmSettings | undefined): boolean {
  return (
    (a?.model ?? V1_DEFAULT_LLM.model) === (b?.model ?? V1_DEFAULT_LLM.model) &&
    (a?.temperature ?? V1_DEFAULT_LLM.temperature) === (b?.temperature ?? V1_DEFAULT_LLM.temperature)
  );
}
