// Recognising an Agents 1.0 config by its shape, so `sop run` and `sop validate` accept one
// directly: a top-level `config` block, `relations` and `states` whose entries hold `agent_states`.

import { isObject } from '../../../shared/util/is-object.js';

export function isAgentsV1Config(doc: unknown): boolean {
  if (!isObject(doc)) return false;
  if (!isObject(doc.config) || !isObject(doc.relations) || !isObject(doc.states)) return false;
  return Object.values(doc.states).some((s) => isObject(s) && Object.prototype.hasOwnProperty.call(s, 'agent_states'));
}
