// sop run FILE: load, pick the LLM and the human input, run, write the run folder.
import { AnswersFileInput, NoHumanInput, TerminalInput, type HumanInput } from '../io/human.js';
import { RunFolder, newRunId } from '../io/run-folder.js';
import { createProvider } from '../llm/factory.js';
import { RetryBudget } from '../llm/retry.js';
import type { RunEvent } from '../runtime/events.js';
import { Run, undeclaredInputs } from '../runtime/run.js';
import { formatDiagnostic } from '../sop/diagnostics.js';
import { loadSopFile } from '../sop/load.js';
import { makeRedactor } from '../util/redact.js';
import { terminalDisplay } from './display.js';

export interface RunCommandOptions {
  file: string;
  llm?: string;
  model?: string;
  baseUrl?: string;
  maxTurns?: number;
  seed?: number;
  record?: string;
  out: string;
  inputs: string[];
  goal?: string;
  answers?: string;
  json: boolean;
  quiet: boolean;
  timeoutMs?: number;
}

export function parseInputs(pairs: string[], goal?: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new Error(`--input "${pair}" must look like name=value`);
    const name = pair.slice(0, eq);
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new Error(`--input name "${name}" must be letters, digits and _`);
    out[name] = pair.slice(eq + 1);
  }
  if (goal !== undefined) out.goal = goal;
  return out;
}

export async function runCommand(o: RunCommandOptions): Promise<number> {
  const redact = makeRedactor();
  const { sop, warnings } = loadSopFile(o.file);
  const err = (s: string) => process.stderr.write(redact(s));
  for (const w of warnings) err(formatDiagnostic(w) + '\n');
  const inputs = parseInputs(o.inputs, o.goal);
  for (const name of undeclaredInputs(sop, inputs)) {
    err(`warning: input "${name}" is not declared by ${sop.name}; it is still available to templates as {{inputs.${name}}}\n`);
  }

  const budget = new RetryBudget(50);
  const emitWarning: { fn?: (e: RunEvent) => void } = {};
  const llm = await createProvider({
    spec: o.llm ?? sop.llm?.provider,
    baseURL: o.baseUrl ?? sop.llm?.base_url,
    record: o.record,
    sopName: sop.name,
    timeoutMs: o.timeoutMs ?? sop.llm?.timeout_ms,
    budget,
    onRetry: (r) => emitWarning.fn?.({ type: 'warning', message: `LLM call failed (${r.reason}); retry ${r.attempt} in ${r.delayMs} ms` }),
  });

  let human: HumanInput;
  if (o.answers) human = new AnswersFileInput(o.answers);
  else if (process.stdin.isTTY) human = new TerminalInput();
  else human = new NoHumanInput();

  const runId = newRunId(sop.name);
  const folder = new RunFolder(o.out, runId, redact);
  const listeners: Array<(e: RunEvent) => void> = [folder.onEvent];
  if (o.json) {
    listeners.push((e) => { if (e.type !== 'delta') process.stdout.write(redact(JSON.stringify(e)) + '\n'); });
  } else {
    listeners.push(terminalDisplay({ out: process.stdout, err: process.stderr, quiet: o.quiet, redact }));
  }
  emitWarning.fn = (e) => { for (const l of listeners) l(e); };

  const abort = new AbortController();
  let interrupts = 0;
  const onSigint = () => {
    interrupts++;
    if (interrupts === 1) {
      err('\nStopping (Ctrl-C again to stop at once)...\n');
      abort.abort(new Error('interrupted by Ctrl-C'));
    } else {
      process.exit(130);
    }
  };
  process.on('SIGINT', onSigint);

  try {
    const run = new Run({
      sop, file: o.file, llm, runId, inputs, seed: o.seed, maxTurns: o.maxTurns, model: o.model,
      human, listeners, signal: abort.signal, stream: !o.json,
    });
    const result = await run.run();
    await llm.close?.();
    const u = result.usage;
    const usage = `${u.calls} LLM calls, ${u.prompt_tokens} prompt + ${u.completion_tokens} completion tokens`;
    if (!o.json) {
      const line = result.status === 'finished'
        ? `Finished in state "${result.finalState}" after ${result.turns} turns; ${usage}.`
        : result.status === 'max_turns'
          ? `Stopped after --max-turns ${result.turns} turns (no final state reached); ${usage}.`
          : result.status === 'interrupted'
            ? `Interrupted after ${result.turns} turns; ${usage}.`
            : `Failed after ${result.turns} turns: ${result.error?.message}`;
      err(`\n${line}\nRun folder: ${folder.dir}\n`);
    }
    if (result.status === 'failed') return 1;
    if (result.status === 'interrupted') return 130;
    return 0;
  } finally {
    process.off('SIGINT', onSigint);
    folder.close();
  }
}
