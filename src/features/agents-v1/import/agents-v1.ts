// `sop import`: an Agents 1.0 config (see docs/agents-v1-semantics.md §1) converted
// into our SOP format. relations -> next_states, agent_states -> components, controller keys ->
// controller, the config block -> environment and agent settings, LLM blocks -> llm, the finish
// state -> final. Every key that cannot be carried, and every known Agents 1.0 problem that
// applies to the file, is a warning naming its key path; a config Agents 1.0 could not load is
// an error.
import { basename, dirname, extname, relative, resolve } from 'node:path';
import { SopError, type Diagnostic } from '../../../format/sop/diagnostics.js';
import type { LlmSettings, Sop, SopState } from '../../../format/sop/types.js';
import { ImportLog, has, literalText } from './import-log.js';
import { isObject } from '../../../shared/util/is-object.js';
import { readConfigBlock } from './v1-config-block.js';
import { V1_DEFAULT_LLM, readLlmBlock } from './v1-llm.js';
import { checkTwoAgentRule, readAgents } from './v1-agents.js';
import { convertState, finishState, reachableStates } from './v1-states.js';

export interface ImportOptions {
  /** The Agents 1.0 config file (names diagnostics; data file paths are resolved from it). */
  file: string;
  /** Where the SOP will be written (default: next to `file`); data file paths become relative to it. */
  outFile?: string;
  /** Value for "$schema" in the output. */
  schemaRef?: string;
}

export interface ImportResult {
  sop: Sop;
  warnings: Diagnostic[];
}

const TOP_KEYS = new Set([
  'config',
  'environment_type',
  'LLM_type',
  'LLM',
  'log_path',
  'root',
  'finish_state_name',
  'relations',
  'agents',
  'states',
  'user_names',
  'temperature',
]);
/** Name of the imported SOP: the file's name, or its folder's for a plain config.json. */
export function importedName(file: string): string {
  const base = basename(file, extname(file));
  const name = base === 'config' ? basename(dirname(resolve(file))) : base;
  return (name || 'imported').slice(0, 200);
}

export function importAgentsV1(doc: unknown, options: ImportOptions): ImportResult {
  const log = new ImportLog(options.file);
  if (!isObject(doc))
    throw new SopError([{ severity: 'error', pointer: '', file: options.file, message: 'an Agents 1.0 config must be a JSON object' }]);
  const outDir = dirname(resolve(options.outFile ?? options.file));

  for (const key of Object.keys(doc)) {
    if (!TOP_KEYS.has(key)) log.warn([key], 'unknown key; not carried');
  }
  if (doc.user_names !== undefined)
    log.warn(['user_names'], 'never used by Agents 1.0 (human players come from config.User_Names); not carried');
  if (doc.temperature !== undefined) log.warn(['temperature'], 'never used by Agents 1.0 (temperatures belong in LLM blocks); not carried');

  const states = isObject(doc.states) ? doc.states : undefined;
  const relations = isObject(doc.relations) ? doc.relations : undefined;
  const agents = isObject(doc.agents) ? doc.agents : undefined;
  if (!states) log.error(['states'], 'must be an object of states');
  if (!relations) log.error(['relations'], 'must be an object: state -> {"0": state, "1": state, ...}');
  if (!agents) log.error(['agents'], 'must be an object of agents');
  const root = doc.root;
  if (typeof root !== 'string') log.error(['root'], 'must name the first state');
  else if (states && !has(states, root)) log.error(['root'], `state "${root}" is not in "states"`);
  if (!states || !relations || !agents || typeof root !== 'string' || log.hasErrors) throw new SopError(log.diagnostics());

  const finish = typeof doc.finish_state_name === 'string' ? doc.finish_state_name : 'end_state';
  if (doc.finish_state_name !== undefined && typeof doc.finish_state_name !== 'string')
    log.warn(['finish_state_name'], 'must be a state name; using "end_state"');

  const usesShopping = Object.values(states).some(
    (s) =>
      isObject(s) &&
      isObject(s.agent_states) &&
      Object.values(s.agent_states).some((c) => isObject(c) && has(c, 'CategoryRequirementsComponent')),
  );
  const settings = readConfigBlock(doc.config, log, usesShopping);
  const envType = readEnvironmentType(doc.environment_type, log);
  const god = readLlmBlock(doc, [], log);

  const tables = readAgents(agents, states, finish, settings, log);
  checkTwoAgentRule(agents, states, root, tables, log);

  const reachable = reachableStates(root, relations, finish);
  const outStates: Record<string, SopState> = {};
  let finishUsed = false;
  for (const [name, st] of Object.entries(states)) {
    if (!isObject(st)) {
      log.error(['states', name], 'must be an object');
      continue;
    }
    if (name === finish) {
      outStates[name] = finishState(name, st, relations, log);
      continue;
    }
    outStates[name] = convertState(name, st, {
      relations,
      states,
      finish,
      god,
      settings,
      tables,
      reachable,
      log,
      configFile: options.file,
      outDir,
    });
    if (Object.values(outStates[name].next_states ?? {}).includes(finish)) finishUsed = true;
  }
  for (const name of Object.keys(relations)) {
    if (!has(states, name)) log.error(['relations', name], `state "${name}" is not in "states"`);
  }
  if (finishUsed && !has(states, finish)) {
    log.warn(
      ['relations'],
      `the finish state "${finish}" is not in "states" (Agents 1.0 fails to load this); sop adds it as a final state`,
    );
    outStates[finish] = { final: true };
  }
  const endsByItself = [...reachable].some((s) => s === finish);
  if (!endsByItself) {
    log.warn(
      ['relations'],
      `no transition from root "${root}" leads to the finish state "${finish}", so the run never ends by itself (as in Agents 1.0); stop it with --max-turns, by ending the answers, or with Ctrl-C`,
    );
  }
  if (log.hasErrors) throw new SopError(log.diagnostics());

  const outAgents: Sop['agents'] = {};
  for (const [name, a] of Object.entries(agents)) {
    const def = a as Record<string, unknown>;
    const roles: Record<string, string> = {};
    for (const [state, byRole] of tables.players) {
      for (const [role, player] of byRole) if (player === name) roles[state] = role;
    }
    outAgents[name] = {
      ...(typeof def.style === 'string' ? { style: literalText(def.style) } : {}),
      roles,
      ...(tables.humans.has(name) ? { human: true } : {}),
    };
  }

  const llm: LlmSettings = { model: V1_DEFAULT_LLM.model, temperature: V1_DEFAULT_LLM.temperature };
  if (settings.apiBase) llm.base_url = settings.apiBase;
  const sop: Sop = {
    ...(options.schemaRef ? { $schema: options.schemaRef } : {}),
    name: importedName(options.file),
    description: `Imported from the Agents 1.0 config ${basename(options.file)} by sop import.`,
    llm,
    environment: { type: envType, max_chat_history: settings.maxChatHistory, top_k: settings.topK },
    agents_v1: {
      source: relative(outDir, resolve(options.file)) || basename(options.file),
      concise: settings.concise,
      name_stripping: 'agents-v1',
    },
    ...(endsByItself ? {} : { open_ended: true }),
    agents: outAgents,
    root,
    states: outStates,
  };
  return { sop, warnings: log.diagnostics() };
}

function readEnvironmentType(value: unknown, log: ImportLog): 'cooperative' | 'competitive' {
  if (value === undefined) return 'cooperative';
  if (value === 'competive') {
    log.warn(
      ['environment_type'],
      'the Agents 1.0 spelling "competive" is read as "competitive": agents see only what was said since their current state began',
    );
    return 'competitive';
  }
  if (value === 'competitive') {
    log.warn(
      ['environment_type'],
      'Agents 1.0 recognised only the misspelling "competive", so it ran this file cooperatively; sop reads "competitive" as written',
    );
    return 'competitive';
  }
  if (value === 'cooperative' || value === 'cooperate') return 'cooperative';
  log.warn(['environment_type'], `unknown value ${JSON.stringify(value)}; read as "cooperative" (as Agents 1.0 did)`);
  return 'cooperative';
}
