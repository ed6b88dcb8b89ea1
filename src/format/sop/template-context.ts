// The variables the engine gives each template, for `sop validate` (src/core/prompt/template-check.ts).
// Keep in step with where the templates are rendered: baseContext() and the ctx objects in
// src/core/runtime/run-loop.ts and src/core/runtime/summaries.ts, src/features/actions (commands, command_retry, command_failed) and the executors
// (code, human, library, sop, task_board). test/hostile-templates.test.ts checks every file in
// prompts/ against its list, so a name added to a template but not here fails there.
import type { TemplateName } from './types.js';

/** Every SOP text (component, environment prompt, begin query, controller prompts) sees these. */
export const BASE_VARIABLES = ['inputs', 'goal', 'sop', 'memory', 'task_board', 'world_model', 'mood', 'population'] as const;

const STATE = [...BASE_VARIABLES, 'state', 'environment_prompt'];
const AGENT = [...STATE, 'agent', 'components', 'commands', 'native_tools', 'last_parts', 'output'];
const HISTORY = ['history', 'last_message', 'relevant'];

export const TEMPLATE_VARIABLES: Record<TemplateName, readonly string[]> = {
  agent_system: AGENT,
  agent_last: AGENT,
  agent_context: [...AGENT, 'summary', 'relevant'],
  agent_message: ['message', 'agent', 'state'],
  judge_system: [...STATE, 'judge', 'extract_word', 'keys', 'summary', ...HISTORY],
  judge_user: [...STATE, 'judge', 'extract_word', 'keys', 'summary', ...HISTORY],
  speaker_system: [...STATE, 'speaker', 'extract_word', 'roles', ...HISTORY],
  speaker_user: [...STATE, 'speaker', 'extract_word', 'roles', ...HISTORY],
  summary_system: [...STATE, 'summary', 'previous', 'history', 'relevant', 'chunk', 'merge'],
  summary_user: [...STATE, 'summary', 'previous', 'history', 'relevant', 'chunk', 'merge'],
  commands: [...BASE_VARIABLES, 'commands'],
  // population states (src/features/population): an agent's system prompt, and what it sees at a step (also a state's `observe`)
  population_system: [...STATE, 'persona', 'actions', 'agent'],
  population_observe: [...BASE_VARIABLES, 'state', 'observation', 'snapshot', 'memory', 'clock', 'step', 'persona', 'agent'],
  // Executor results and questions see only their own values.
  command_retry: ['error', 'commands', 'attempt', 'retries'],
  command_failed: ['command', 'error'],
  code_approval: ['language', 'code', 'command', 'agent', 'file', 'editor'],
  code_result: [
    'refused',
    'reply',
    'language',
    'ended',
    'ok',
    'stdout',
    'stderr',
    'dropped_stdout',
    'dropped_stderr',
    'sandboxed',
    'session',
    'error',
    'files',
    'session_lost',
    'session_ended',
    'cell',
    'edited',
    'code',
    'feedback',
    'network_hint',
  ],
  human_question: ['kind', 'text', 'file', 'command', 'agent', 'rejections', 'functions'],
  human_result: ['kind', 'reply', 'automatic', 'text', 'away', 'accepted', 'chosen', 'edited', 'save_to', 'final'],
  library_result: [
    'op',
    'module',
    'language',
    'syntax_error',
    'no_function',
    'tests_refused',
    'reply',
    'functions',
    'tests_failed',
    'test',
    'user_tests',
    'prior_failed',
    'declined',
    'overridden',
    'saved',
    'import_hint',
    'listed',
    'feedback',
  ],
  subflow_result: ['command', 'stopped', 'failed', 'error', 'turns', 'result', 'summary', 'feedback'],
};
