// sop run FILE: load, pick the LLM and the human input, run, write the run folder.
import type { FlagOptions } from '../../api/option-types.js';
import { apiOf, launchOf, type Launch } from '../../api/launch.js';
import { useLocalThreads } from './option-flags.js';
import { newRunId } from '../../features/journal/run-folder.js';
import { recordRunProvenance } from '../report/provenance.js';
import type { RunEvent } from '../../core/runtime/events.js';
import { startRun, type LlmChoice } from '../../api/run-sop.js';
import { checkGivenInputs, type Run, type RunResult } from '../../api/engine/run-with-features.js';
import { MemoryEnvironment } from '../../core/environment/memory-environment.js';
import { AudienceRules } from '../../core/environment/audience.js';
import { formatDiagnostic } from '../../format/sop/diagnostics.js';
import { loadSopFile } from '../../api/loader/checked-load.js';
import { approveSopPlugins } from './plugin-approval.js';
import type { Continuation } from '../../api/continue.js';
import { existsSync, statSync } from 'node:fs';
import { resolve as resolvePath } from 'node:path';
import { configureSecrets, configuredSecretNames, makeRedactor } from '../../shared/util/redact.js';
import { llmBlockSecrets } from '../../core/llm/endpoints.js';
import { terminalSafe } from '../../shared/util/terminal-text.js';
import { costText } from './cost-text.js';
import { terminalDisplay } from './display.js';
import { wrapFor } from './word-wrap.js';
import { EXIT, interruptedExit } from './exit-codes.js';
import { resolveSopArg } from './builtin-sops.js';
import { EngineError } from '../../shared/errors.js';
import { cliMessage } from './errors.js';
import { count } from '../../shared/util/plural.js';
import { startWebSeats } from './seats-web.js';

/**
 * The options of `sop run` (and of the run `sop resume` or `sop fork` continues): the option
 * table's (src/api/option-table.ts) by their names, in the API's units, and the command's own.
 */
export type RunCommandOptions = FlagOptions & {
  /** The SOP file (or the name of a built-in SOP). */
  file: string;
  out: string;
  /** --input name=value pairs. */
  inputs: string[];
  json: boolean;
  quiet: boolean;
  /** durability: run again, without asking, code a crash interrupted (default: autoRun). */
  rerunAutoRun?: boolean;
};

export function parseInputs(pairs: string[], goal?: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new EngineError(`--input "${pair}" must look like name=value`, 'OPTION');
    const name = pair.slice(0, eq);
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new EngineError(`--input name "${name}" must be letters, digits and _`, 'OPTION');
    if (name === '__proto__' || name === 'constructor' || name === 'prototype')
      throw new EngineError(`--input name "${name}" is reserved`, 'OPTION');
    out[name] = pair.slice(eq + 1);
  }
  if (goal !== undefined) out.goal = goal;
  return out;
}

/**
 * `sop run`, and (with `continuation`) the rest of a run that `sop resume` or `sop fork`
 * continues from a journaled checkpoint, with the same set-up of LLM, human input and display.
 */
export async function runCommand(o: RunCommandOptions, continuation?: Continuation): Promise<number> {
  configureSecrets({ names: o.redact, urls: [o.baseUrl] }); // secrets: --redact NAME, a key in --base-url
  useLocalThreads(o.localThreads); // --local-threads: the process's local models (SOP_LOCAL_THREADS)
  if (!continuation) o = { ...o, file: resolveSopArg(o.file) }; // a name not found here: a built-in SOP (sops/)
  if (!continuation) await approveSopPlugins(o.file, { yes: o.yes, command: 'sop run' }); // its "plugins", with approval
  const { sop: loaded, warnings } = continuation ? { sop: continuation.sop, warnings: [] } : loadSopFile(o.file);
  configureSecrets({ urls: [loaded.llm?.base_url] });
  configureSecrets(llmBlockSecrets(loaded)); // the keys and servers of LLM blocks with their own (llm.api_key_env, llm.base_url)
  const redact = makeRedactor();
  const sop = loaded;
  const err = (s: string) => process.stderr.write(redact(s));
  for (const w of warnings) err(formatDiagnostic(w) + '\n');
  const inputs = continuation ? continuation.inputs : parseInputs(o.inputs, o.goal);
  if (!continuation && o.tests !== undefined) inputs.tests = testsInput(sop, o.tests);
  if (!continuation) checkGivenInputs(sop, inputs); // a misspelt name, a required input not given: refused before the run starts
  // a person playing agents at this terminal sees what those agents may see (their audience)
  const terminal = process.stdin.isTTY === true;
  const players = Object.entries(sop.agents)
    .filter(([, a]) => a.human)
    .map(([name]) => name);

  const listeners: Array<(e: RunEvent) => void> = [];
  if (o.json) {
    listeners.push((e) => {
      if (e.type !== 'delta') process.stdout.write(redact(JSON.stringify(e)) + '\n');
    });
  } else {
    // a person playing agents at this terminal sees what those agents may see (their audience)
    const player = terminal && o.answers === undefined ? players : undefined;
    const audiences = new AudienceRules(sop);
    listeners.push(
      terminalDisplay({
        out: process.stdout,
        err: process.stderr,
        quiet: o.quiet,
        redact,
        player,
        audiences: audiences.active ? audiences : undefined,
      }),
    );
  }
  const runId = newRunId(sop.name);
  if (o.plan && !continuation) {
    // --plan: the prediction of sop plan, in the run folder before the run starts (usage.json then shows it beside the run's figures)
    const { writeRunPlan } = await import('./plan-of.js');
    const mock = (o.llm ?? sop.llm?.provider) === 'mock';
    const planned = { sop, file: o.file, inputs, seed: o.seed, maxTurns: o.maxTurns, mock };
    await writeRunPlan(resolvePath(o.out, runId), planned, o);
  }
  // --web: the seats served on a web page, their links printed (docs/seats.md)
  const seats = await startWebSeats(sop, o, err);
  // The run goes through the public API (src/api/start.ts): it makes the run's choices (LLM,
  // retry budget, embedder, people, sandbox, consent) and writes the run folder and the journal.
  const started = await startRun(
    sop,
    {
      ...apiOf(o), // every option of the table the command line gives (src/api/launch.ts)
      llm: o.llm as LlmChoice | undefined,
      terminal,
      runId,
      inputs,
      listeners,
      stream: !o.json && !o.quiet, // nobody watches the deltas with --json or --quiet: plain answers cost less CPU
      prompts: o.json && o.jsonPrompts === true, // --json-prompts
      rerun: { autoRun: o.rerunAutoRun ?? o.autoRun },
      launch: launchSettings(o),
      ...(seats ? { plugins: seats.plugins } : {}),
    },
    continuation,
  ).catch(async (e: unknown) => {
    await seats?.finish();
    throw e;
  });
  const folder = started.folder!;
  // with --json, warnings said before the run are JSON events on stdout, and for a person on stderr
  if (o.json) for (const w of started.warnings) err(`warning: ${cliMessage(w)}\n`);

  // First Ctrl-C: abandon the LLM call in flight (a server may never answer), or let a turn
  // that is not waiting on the LLM finish, then stop (interrupted, resumable). Second: stop at
  // once; the journal holds every finished turn, so the run can still be resumed.
  let interrupts = 0;
  const onSigint = () => {
    interrupts++;
    if (interrupts === 1) {
      err(
        `\nStopping after this turn, or now if it is waiting for the LLM (Ctrl-C again to stop at once). Resume with: sop resume ${folder.dir}\n`,
      );
      started.interrupt();
    } else {
      folder.close();
      err(`\nStopped. Resume with: sop resume ${folder.dir}\n`);
      // tracing: send the spans so far (at most 2 s), then exit
      if (started.flushTraces)
        void Promise.race([started.flushTraces(), new Promise((r) => setTimeout(r, 2000).unref())]).finally(() => process.exit(130));
      else process.exit(130);
    }
  };
  process.on('SIGINT', onSigint);

  try {
    const run = started.run;
    const result = await started.handle.result;
    const u = result.usage;
    const cost = costText(u);
    const usage = `${u.calls} LLM calls, ${u.prompt_tokens} prompt + ${u.completion_tokens} completion tokens${cost ? `; ${cost}` : ''}`;
    if (!o.json) {
      const line =
        result.status === 'finished'
          ? `Finished in state "${result.finalState}" after ${count(result.turns, 'turn')}; ${usage}.`
          : result.status === 'max_turns'
            ? `Stopped after --max-turns ${count(result.turns, 'turn')} (no final state reached); ${usage}.`
            : result.status === 'budget'
              ? `Stopped by the budget after ${count(result.turns, 'turn')} (${result.budget}); ${usage}.`
              : result.status === 'interrupted'
                ? `Interrupted after ${count(result.turns, 'turn')}${result.error ? ` (${cliMessage(result.error)})` : ''}; ${usage}.\nResume with: sop resume ${folder.dir}`
                : `Failed after ${count(result.turns, 'turn')}: ${cliMessage(result.error ?? '')}`;
      // actions: the SOP's finish result, only for a run that finished (a stopped run's last result is
      // an intermediate state's, such as the plan)
      const outcome = result.result !== undefined && result.status === 'finished' ? `Result: ${result.result}\n` : '';
      // --quiet: the closing line alone, with the run folder (an interrupted run's names it already)
      if (o.quiet) {
        // a failure's line ends with the error's own text: a full stop before the run folder
        const flat = terminalSafe(line).replace(/\n/g, ' ');
        const stop = /[.!?]$/.test(flat) ? '' : '.';
        err(`${flat}${result.status === 'interrupted' ? '' : `${stop} Run folder: ${folder.dir}`}\n`);
      } else
        err(wrapFor(process.stderr, `\n${terminalSafe(line)}\n${terminalSafe(outcome)}${memoryLine(run, u)}Run folder: ${folder.dir}\n`));
    }
    if (result.status === 'failed') return EXIT.failed;
    if (result.status === 'interrupted') return interruptedExit(result.error, interrupts > 0);
    return EXIT.ok;
  } finally {
    process.off('SIGINT', onSigint);
    folder.close();
    await seats?.finish();
    // RUN/provenance.json: the hashes of what the run read and of its outcome (docs/validity.md#provenance)
    const problem = recordRunProvenance(folder.dir);
    if (problem) err(`warning: ${problem}\n`);
  }
}

/** Prompt sizes at sample turns (flat once the window fills) and embedding time, when there are any. */
function memoryLine(run: Run, u: RunResult['usage']): string {
  const parts: string[] = [];
  const at = Object.entries(u.agent_prompt_tokens_at_turn ?? {});
  if (at.length > 0)
    parts.push(
      `Prompt size of the speaking agent in tokens, sampled at turn ${at.map(([t, n]) => `${t}: ${n}`).join(', ')} (usage.json: agent_prompt_tokens_at_turn).`,
    );
  if (run.env instanceof MemoryEnvironment && run.env.embedderId) {
    parts.push(`Embeddings: ${run.env.embedderId}, ${run.env.messages.length} messages, ${Math.round(run.env.embedMs)} ms.`);
  }
  return parts.length > 0 ? parts.join(' ') + '\n' : '';
}

/** What `sop resume` reuses of this command line: the option table says which (src/api/launch.ts). */
export function launchSettings(o: RunCommandOptions): Launch {
  // secrets: the names given with --redact (never values), and those configured, so a resume redacts them too
  const redact = [...new Set([...(o.redact ?? []), ...configuredSecretNames()])];
  return launchOf({ ...o, redact });
}

/** --tests DIR: the SOP's `tests` input, as an absolute path to a folder that exists. */
function testsInput(sop: { name: string; inputs?: Record<string, unknown> }, dir: string): string {
  if (!sop.inputs || !Object.prototype.hasOwnProperty.call(sop.inputs, 'tests'))
    throw new EngineError(`--tests: ${sop.name} has no "tests" input, so it runs no tests of yours (see docs/executors.md)`, 'OPTION');
  const path = resolvePath(dir);
  if (!existsSync(path) || !statSync(path).isDirectory()) throw new EngineError(`--tests: ${path} is not a folder`, 'OPTION');
  return path;
}
