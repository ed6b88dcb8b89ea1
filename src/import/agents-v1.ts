// `sop import`: an Agents 1.0 config (see docs/agents-v1-semantics.md §1) converted
// into our SOP format. relations -> next_states, agent_states -> components, controller keys ->
// controller, the config block -> environment and agent settings, LLM blocks -> llm, the finish
// state -> final. Every key that cannot be carried, and every known Agents 1.0 problem that
// applies to the file, is a warning naming its key path; a config Agents 1.0 could not load is
// an error.
import { basename, dirname, extname, relative, resolve } from 'node:path';
import { SopError, type Diagnostic } from '../sop/diagnostics.js';
import type { LlmSettings, Sop, SopComponents, SopController, SopState } from '../sop/types.js';
import { ImportLog, has, literalText, type KeyPath } from './import-log.js';
import { isObject } from '../util/is-object.js';
import { convertComponents } from './v1-components.js';
import { readConfigBlock, type V1Settings } from './v1-config-block.js';
import { V1_DEFAULT_LLM, readLlmBlock } from './v1-llm.js';

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
const STATE_KEYS = new Set([
  'roles',
  'begin_role',
  'begin_query',
  'environment_prompt',
  'LLM_type',
  'LLM',
  'log_path',
  'controller',
  'summary_system_prompt',
  'summary_last_prompt',
  'summary_prompt',
  'agent_states',
  'name',
]);
const CONTROLLER_KEYS = new Set([
  'controller_type',
  'max_chat_nums',
  'judge_system_prompt',
  'judge_last_prompt',
  'judge_extract_words',
  'call_system_prompt',
  'call_last_prompt',
  'call_extract_words',
]);
const TAG = /^[A-Za-z_][A-Za-z0-9_.-]*$/;

/** Name of the imported SOP: the file's name, or its folder's for a plain config.json. */
export function importedName(file: string): string {
  const base = basename(file, extname(file));
  const name = base === 'config' ? basename(dirname(resolve(file))) : base;
  return (name || 'imported').slice(0, 200);
}

interface Tables {
  /** state -> role -> agent (the agent that plays it; the last claim wins, as in Agents 1.0). */
  players: Map<string, Map<string, string>>;
  humans: Set<string>;
  /** Every `state\0role` some agent claims, in the roster or not. */
  claims: Set<string>;
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
    if (Object.values(outStates[name]!.next_states ?? {}).includes(finish)) finishUsed = true;
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

function readAgents(
  agents: Record<string, unknown>,
  states: Record<string, unknown>,
  finish: string,
  settings: V1Settings,
  log: ImportLog,
): Tables {
  const players = new Map<string, Map<string, string>>();
  const humans = new Set<string>();
  const claims = new Set<string>();
  for (const name of settings.userNames) {
    if (!has(agents, name)) log.warn(['config', 'User_Names'], `"${name}" is not one of the agents`);
  }
  for (const [name, a] of Object.entries(agents)) {
    const at = ['agents', name];
    if (!isObject(a)) {
      log.error(at, 'must be an object {style, roles}');
      continue;
    }
    if (typeof a.style !== 'string') log.warn([...at, 'style'], 'missing (Agents 1.0 fails without it); the agent has no style');
    for (const key of Object.keys(a)) if (key !== 'style' && key !== 'roles') log.warn([...at, key], 'unknown key; not carried');
    if (settings.userNames.includes(name)) humans.add(name);
    if (!isObject(a.roles)) {
      log.error([...at, 'roles'], 'must be an object: state -> role');
      continue;
    }
    for (const [state, role] of Object.entries(a.roles)) {
      const rat = [...at, 'roles', state];
      if (typeof role !== 'string' || role === '') {
        log.error(rat, 'must be a role name');
        continue;
      }
      const st = has(states, state) ? states[state] : undefined;
      if (!isObject(st)) {
        log.error(rat, `state "${state}" is not in "states"`);
        continue;
      }
      if (state === finish) continue; // the finish state never runs
      const comps = isObject(st.agent_states) ? st.agent_states : {};
      if (!has(comps, role)) {
        log.error(
          rat,
          `role "${role}" has no entry in states.${state}.agent_states (Agents 1.0 fails to load this); add "${role}": {} there`,
        );
        continue;
      }
      claims.add(`${state}\u0000${role}`);
      const roster = Array.isArray(st.roles) && st.roles.length > 0 ? st.roles : Object.keys(comps);
      if (!roster.includes(role)) {
        log.warn(
          ['states', state, 'agent_states', role],
          `role "${role}" (played by ${name}) is not in "roles", so it never speaks and its components never run (as in Agents 1.0)`,
        );
        continue;
      }
      const byRole = players.get(state) ?? new Map<string, string>();
      players.set(state, byRole);
      const before = byRole.get(role);
      if (before !== undefined)
        log.warn(
          ['agents', before, 'roles', state],
          `${name} also plays "${role}" in "${state}"; the last one (${name}) plays it, as in Agents 1.0`,
        );
      byRole.set(role, name);
    }
  }
  return { players, humans, claims };
}

/** Agents 1.0 refuses a two-agent config (a bot and a human) whose root does not open with the bot's fixed line. */
function checkTwoAgentRule(
  agents: Record<string, unknown>,
  states: Record<string, unknown>,
  root: string,
  t: Tables,
  log: ImportLog,
): void {
  if (Object.keys(agents).length !== 2) return;
  const st = states[root];
  if (!isObject(st)) return;
  const why =
    'Agents 1.0 requires, for a config with exactly two agents (one bot and one human), that the root state names a begin_role played by the bot and a begin_query';
  if (typeof st.begin_role !== 'string') {
    log.error(['states', root], `has no begin_role: ${why}`);
    return;
  }
  const player = t.players.get(root)?.get(st.begin_role);
  if (player !== undefined && t.humans.has(player))
    log.error(['states', root, 'begin_role'], `"${st.begin_role}" is played by the human ${player}: ${why}`);
  if (typeof st.begin_query !== 'string') log.error(['states', root], `has no begin_query: ${why}`);
}

function reachableStates(root: string, relations: Record<string, unknown>, finish: string): Set<string> {
  const seen = new Set<string>();
  const todo = [root];
  while (todo.length > 0) {
    const s = todo.pop()!;
    if (seen.has(s)) continue;
    seen.add(s);
    if (s === finish) continue;
    const rel = has(relations, s) ? relations[s] : undefined;
    if (isObject(rel)) for (const t of Object.values(rel)) if (typeof t === 'string') todo.push(t);
  }
  return seen;
}

function finishState(name: string, st: Record<string, unknown>, relations: Record<string, unknown>, log: ImportLog): SopState {
  const unused = Object.keys(st).filter(
    (k) => k !== 'name' && !(k === 'agent_states' && isObject(st[k]) && Object.keys(st[k] as object).length === 0),
  );
  if (unused.length > 0) {
    log.warn(
      ['states', name],
      `"${name}" is the finish state: entering it ends the run, so its ${unused.join(', ')} never run (as in Agents 1.0); not carried`,
    );
  }
  if (has(relations, name) && isObject(relations[name]))
    log.warn(['relations', name], `transitions out of the finish state "${name}" are never taken (as in Agents 1.0); not carried`);
  return { final: true };
}

interface StateContext {
  relations: Record<string, unknown>;
  states: Record<string, unknown>;
  finish: string;
  god: LlmSettings | undefined;
  settings: V1Settings;
  tables: Tables;
  reachable: Set<string>;
  log: ImportLog;
  configFile: string;
  outDir: string;
}

function convertState(name: string, st: Record<string, unknown>, c: StateContext): SopState {
  const { log } = c;
  const at = (...rest: Array<string | number>): KeyPath => ['states', name, ...rest];
  for (const key of Object.keys(st)) {
    if (key === 'agent_state')
      log.warn(at(key), 'misspelt "agent_state" (Agents 1.0 silently ignored it; the key is "agent_states"); not carried');
    else if (!STATE_KEYS.has(key)) log.warn(at(key), 'unknown key; not carried');
  }
  if (st.name !== undefined && st.name !== name)
    log.warn(at('name'), `"${String(st.name)}" differs from the state's key "${name}"; the key is used`);
  const out: Record<string, unknown> = {};
  const agentStates = isObject(st.agent_states) ? st.agent_states : {};
  if (st.agent_states !== undefined && !isObject(st.agent_states)) log.error(at('agent_states'), 'must be an object: role -> components');

  let roles: string[];
  if (Array.isArray(st.roles) && st.roles.length > 0) {
    roles = [];
    st.roles.forEach((r, i) => {
      if (typeof r !== 'string' || r === '') log.error(at('roles', i), 'must be a role name');
      else if (roles.includes(r)) log.warn(at('roles', i), `"${r}" is listed twice; listed once`);
      else roles.push(r);
    });
  } else {
    roles = Object.keys(agentStates);
    if (roles.length === 0) log.error(at(), 'has no roles and no agent_states, so nobody can speak in it');
  }
  out.roles = roles;

  const humansHere = new Set<string>();
  for (const [role, player] of c.tables.players.get(name) ?? []) if (c.tables.humans.has(player)) humansHere.add(role);

  // Opening turn.
  if (typeof st.begin_role === 'string') {
    out.begin_role = st.begin_role;
    if (typeof st.begin_query === 'string') out.begin_query = literalText(st.begin_query);
    else if (!humansHere.has(st.begin_role)) {
      log.warn(
        at('begin_role'),
        'explicit begin_role without begin_query: Agents 1.0 opened the state with a single space; sop asks the LLM instead (--compat agents-v1 restores the space)',
      );
    }
  } else if (st.begin_role !== undefined) {
    log.warn(at('begin_role'), 'must be a role name; not carried');
  } else if (st.begin_query !== undefined) {
    log.warn(at('begin_query'), 'never said: Agents 1.0 used begin_query only with an explicit begin_role; not carried');
  }
  if (typeof st.environment_prompt === 'string' && st.environment_prompt !== '')
    out.environment_prompt = literalText(st.environment_prompt);

  // Transitions.
  const next = convertRelations(name, c);
  out.next_states = next;
  const successors = Object.keys(next).length;

  // Controller (judge with 2+ successors, router for rule with 2+ roles).
  const controller = convertController(name, st.controller, successors, roles.length, c);
  if (controller) out.controller = controller;

  // Summaries: the state's own LLM block is its summariser's, nothing else's.
  const summary: Record<string, unknown> = {};
  if (typeof st.summary_system_prompt === 'string' && st.summary_system_prompt !== '')
    summary.system_prompt = literalText(st.summary_system_prompt);
  const stateLlm = readLlmBlock(st, at(), log);
  if (stateLlm) {
    summary.llm = stateLlm;
    log.warnOnce(
      'state-llm',
      at('LLM'),
      "a state's LLM block drives only its environment summaries in Agents 1.0, not its agents (they use their role's LLM or the default gpt-3.5-turbo-16k-0613 at 0.3) nor the judge; carried as summary.llm",
    );
  }
  if (Object.keys(summary).length > 0) out.summary = summary;
  if (st.summary_last_prompt !== undefined) log.warn(at('summary_last_prompt'), 'never used by Agents 1.0; not carried');
  if (st.summary_prompt !== undefined)
    log.warn(at('summary_prompt'), 'per-agent summaries practically never ran in Agents 1.0 and sop does not make them; not carried');

  // Components per role.
  const components: Record<string, SopComponents> = {};
  for (const [role, map] of Object.entries(agentStates)) {
    const rat = at('agent_states', role);
    if (!isObject(map)) {
      log.error(rat, 'must be an object of components');
      continue;
    }
    if (!roles.includes(role) && !c.tables.claims.has(`${name}\u0000${role}`)) {
      log.warn(
        rat,
        `role "${role}" is not in "roles" and no agent plays it, so it never speaks (Agents 1.0 ignored it silently); not carried`,
      );
      continue;
    }
    if (humansHere.has(role)) {
      if (Object.keys(map).length > 0)
        log.warn(rat, 'a human plays this role, so its components are never used (as in Agents 1.0); not carried');
      continue;
    }
    const comps = convertComponents(map, { log, path: rat, configFile: c.configFile, outDir: c.outDir, settings: c.settings });
    if (Object.keys(comps).length > 0) components[role] = comps;
  }
  if (Object.keys(components).length > 0) out.components = components;
  return out as SopState;
}

function convertRelations(name: string, c: StateContext): Record<string, string> {
  const { log } = c;
  const rel = has(c.relations, name) ? c.relations[name] : undefined;
  if (!isObject(rel) || Object.keys(rel).length === 0) {
    if (c.reachable.has(name)) {
      log.error(
        ['relations', name],
        `state "${name}" has no relations (Agents 1.0 fails when the run leaves it); add "${name}": {"0": "${name}"} to stay, or a way on`,
      );
      return {};
    }
    log.warn(['relations'], `state "${name}" has no relations; it is unreachable, so sop makes it stay on itself`);
    return { '0': name };
  }
  const out: Record<string, string> = {};
  for (const [key, target] of Object.entries(rel)) {
    const at = ['relations', name, key];
    if (!/^[0-9]+$/.test(key)) {
      log.error(at, `key "${key}" must be a digit string ("0" stays, "1" moves on)`);
      continue;
    }
    if (typeof target !== 'string' || (!has(c.states, target) && target !== c.finish)) {
      log.error(at, `target ${JSON.stringify(target)} is not in "states"`);
      continue;
    }
    out[key] = target;
  }
  const keys = Object.keys(out);
  if (keys.length === 1 && keys[0] !== '0') {
    log.warn(
      ['relations', name, keys[0]!],
      `a single transition is always taken under key "0" (Agents 1.0 fails on any other key); read as "0"`,
    );
    return { '0': out[keys[0]!]! };
  }
  return out;
}

function convertController(
  name: string,
  value: unknown,
  successors: number,
  roleCount: number,
  c: StateContext,
): SopController | undefined {
  const { log } = c;
  const at = (...rest: string[]): KeyPath => ['states', name, 'controller', ...rest];
  const needsJudge = successors >= 2;
  if (value === undefined) {
    if (needsJudge || roleCount > 1)
      log.warn(['states', name], 'has no controller (Agents 1.0 fails when it needs one); sop uses an order controller');
    return needsJudge && c.god ? { llm: c.god } : undefined;
  }
  if (!isObject(value)) {
    log.warn(at(), 'must be an object; using an order controller');
    return undefined;
  }
  for (const key of Object.keys(value)) if (!CONTROLLER_KEYS.has(key)) log.warn(at(key), 'unknown controller key; not carried');
  const out: Record<string, unknown> = {};
  const type = value.controller_type ?? 'order';
  if (type !== 'order' && type !== 'random' && type !== 'rule') {
    log.error(at('controller_type'), `must be "order", "random" or "rule", got ${JSON.stringify(type)} (Agents 1.0 fails on it)`);
  } else {
    out.type = type;
  }
  if (value.max_chat_nums !== undefined) {
    const n = value.max_chat_nums;
    if (typeof n !== 'number' || !Number.isInteger(n)) log.warn(at('max_chat_nums'), 'must be a whole number; not carried');
    else if (n < 1) {
      log.warn(at('max_chat_nums'), `${n} is read as 1 (the state moves on after its first turn, as in Agents 1.0)`);
      out.max_turns = 1;
    } else out.max_turns = n;
  }
  const str = (key: string): string | undefined =>
    typeof value[key] === 'string' && value[key] !== '' ? (value[key] as string) : undefined;
  const word = (key: string): string | undefined => {
    const w = str(key);
    if (w !== undefined && !TAG.test(w)) {
      log.warn(at(key), `must be a tag name (letters, digits, _ . -), got ${JSON.stringify(w)}; using "end"`);
      return undefined;
    }
    return w;
  };
  // Judge.
  const judgeWord = word('judge_extract_words');
  const judge: Record<string, string> = {};
  if (str('judge_system_prompt')) judge.system_prompt = literalText(str('judge_system_prompt')!);
  if (str('judge_last_prompt')) judge.last_prompt = literalText(str('judge_last_prompt')!);
  if (judgeWord && judgeWord !== 'end') judge.extract_word = judgeWord;
  const tag = judgeWord ?? 'end';
  const jl = str('judge_last_prompt');
  if (jl && jl.includes(`<${tag}>`) && !jl.includes(`</${tag}>`)) {
    log.warn(
      at('judge_last_prompt'),
      `shows <${tag}> without a closing </${tag}>, so a judge copying it gives a reply that cannot be read (sop then stays, as Agents 1.0 did)`,
    );
  }
  if (needsJudge) {
    if (Object.keys(judge).length > 0) out.judge = judge;
  } else if (judge.system_prompt || judge.last_prompt) {
    log.warn(
      at(judge.system_prompt ? 'judge_system_prompt' : 'judge_last_prompt'),
      'the judge is consulted only in states with two or more transitions; unused here',
    );
  }
  // Router (rule).
  const speaker: Record<string, string> = {};
  const callWord = word('call_extract_words');
  if (str('call_system_prompt')) speaker.system_prompt = literalText(str('call_system_prompt')!);
  if (str('call_last_prompt')) speaker.last_prompt = literalText(str('call_last_prompt')!);
  if (callWord && callWord !== 'end') speaker.extract_word = callWord;
  if (type === 'rule') {
    if (speaker.last_prompt)
      log.warn(
        at('call_last_prompt'),
        'Agents 1.0 never sent call_last_prompt (it was overwritten); sop includes it, --compat agents-v1 drops it',
      );
    if (speaker.extract_word)
      log.warn(
        at('call_extract_words'),
        `Agents 1.0 always asked for <end> tags, so replies rarely carried <${speaker.extract_word}> and the speaker was picked at random; sop asks for <${speaker.extract_word}> (--compat agents-v1 asks for <end>)`,
      );
    if (Object.keys(speaker).length > 0) out.speaker = speaker;
  } else if (speaker.system_prompt || speaker.last_prompt) {
    log.warn(
      at(speaker.system_prompt ? 'call_system_prompt' : 'call_last_prompt'),
      `call_* prompts are used only by controller_type "rule" (this one is "${String(type)}"); unused`,
    );
  }
  if (c.god && (needsJudge || (type === 'rule' && roleCount > 1))) out.llm = c.god;
  return out as SopController;
}
