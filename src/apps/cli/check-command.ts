// sop check FILE [--runs N]: what a SOP is expected to cost, from dry runs with the mock (src/features/cost/check.ts).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { checkSop, type CheckReport, type Spread } from '../../api/cost-check.js';
import { loadPricing } from '../../core/llm/pricing.js';
import { loadSopFile } from '../../api/loader/checked-load.js';
import { checkGivenInputs } from '../../api/engine/run-with-features.js';
import { formatDiagnostic } from '../../format/sop/diagnostics.js';
import { packageRoot } from '../../shared/util/package-root.js';
import { cliLlmAllowEntries, consentWarnings, fileLlmAllowEntries } from '../../core/llm/consent.js';
import { lastValues } from './last-value.js';
import { textTable } from './text-table.js';
import { parseInputs } from './run-command.js';
import { EngineError } from '../../shared/errors.js';

export interface CheckCommandOptions {
  file: string;
  runs: number;
  maxTurns?: number;
  pricing?: string;
  inputs: string[];
  goal?: string;
  json: boolean;
  /** LLM servers the SOP names that a real run may call (src/core/llm/consent.ts); the others are warned of. */
  allowBaseUrl?: string[];
  allowBaseUrlEnv?: string[];
}

const int = (n: number) => (Number.isInteger(n) ? String(n) : n.toFixed(1));
const usd = (n: number) => `$${n.toFixed(4)}`;

function table(title: string, rows: Array<[string, Spread]>, fmt: (n: number) => string): string {
  const cells = rows.map(([name, s]) => ['  ' + name, fmt(s.min), fmt(s.median), fmt(s.max)]);
  return textTable([title, 'min', 'median', 'max'], cells, [false, true, true, true]);
}

export function formatCheck(
  r: CheckReport,
  o: { sop: string; runs: number; asOf?: string; sopPrices?: boolean; pricingFile?: string },
): string {
  let out = `sop check ${o.sop}: ${r.runs} dry run${r.runs > 1 ? 's' : ''} with the mock (${r.runs > 1 ? `seeds 1-${r.runs}` : 'seed 1'})\n`;
  out += `Outcome: ${Object.entries(r.statuses)
    .map(([s, n]) => `${n} ${s}`)
    .join(', ')}; turns ${int(r.turns.min)} / ${int(r.turns.median)} / ${int(r.turns.max)} (min / median / max)\n\n`;
  const finished = Object.entries(r.statuses)
    .filter(([s]) => s !== 'failed' && s !== 'interrupted')
    .reduce((n, [, k]) => n + k, 0);
  if (finished === 0) {
    // no dry run got through: its calls and tokens are not an estimate of anything
    out += `Estimate: none, every dry run failed (see the warning below).\n`;
    for (const w of r.warnings) out += `warning: ${w}\n`;
    return out;
  }
  out += table(
    'LLM calls per run',
    Object.entries(r.calls).map(([p, s]) => [p, s]),
    int,
  );
  out +=
    '\n' +
    table(
      'Tokens per run',
      [
        ['prompt', r.prompt_tokens],
        ['completion', r.completion_tokens],
      ],
      int,
    );
  out += `  largest prompt of one call: ${r.largest_prompt} tokens\n\n`;
  const priced = Object.entries(r.cost_by_model).filter((e): e is [string, Spread] => e[1] !== 'unknown');
  const source = [
    ...(o.sopPrices ? ["the SOP's llm.pricing"] : []),
    ...(o.pricingFile ? [o.pricingFile] : []),
    `pricing.json${o.asOf ? ` as of ${o.asOf}` : ''}`,
  ].join(', else ');
  if (priced.length > 0) out += table(`Cost per run (${source})`, priced, usd);
  for (const [model, c] of Object.entries(r.cost_by_model))
    if (c === 'unknown') out += `  ${model}: cost unknown (no price; add it with --pricing FILE)\n`;
  const tokens = r.prompt_tokens.median + r.completion_tokens.median;
  out += `\nEstimate: about ${Math.round(tokens)} tokens${r.cost ? ` and ${usd(r.cost.median)}` : ', cost unknown,'} per run (median; ${r.cost ? `${usd(r.cost.min)} to ${usd(r.cost.max)}` : 'a model has no price'}).\n`;
  out +=
    'Mock replies are one line, so real replies (and the prompts that carry them) run larger: take this as a floor, and set a budget (--budget-tokens, --budget-usd) for the real run.\n';
  for (const w of r.warnings) out += `warning: ${w}\n`;
  return out;
}

export async function checkCommand(given: CheckCommandOptions): Promise<number> {
  const o = lastValues(given, ['inputs', 'allowBaseUrl', 'allowBaseUrlEnv']);
  if (!(Number.isInteger(o.runs) && o.runs >= 1 && o.runs <= 1000))
    throw new EngineError(`--runs must be a whole number from 1 to 1000 (got ${o.runs})`, 'OPTION');
  if (o.maxTurns !== undefined && !(Number.isInteger(o.maxTurns) && o.maxTurns >= 1))
    throw new EngineError(`--max-turns must be a whole number of turns, at least 1 (got ${o.maxTurns})`, 'OPTION');
  const { sop, warnings } = loadSopFile(o.file);
  for (const w of warnings) process.stderr.write(formatDiagnostic(w) + '\n');
  const inputs = parseInputs(o.inputs, o.goal);
  checkGivenInputs(sop, inputs); // a misspelt name, a required input not given
  const pricing = loadPricing(o.pricing);
  const cliAllow = cliLlmAllowEntries(o.allowBaseUrl, o.allowBaseUrlEnv);
  const { resolveSandbox, sopRunsCode } = await import('../../features/actions/executors/sandbox-mode.js');
  const sandbox = resolveSandbox(undefined, sopRunsCode(sop));
  const report = await checkSop({
    sop,
    file: o.file,
    runs: o.runs,
    maxTurns: o.maxTurns,
    pricing,
    inputs,
    sandbox: sandbox.sandbox,
  });
  // the dry runs call the mock; a real run would send its calls to the servers the SOP names
  report.warnings.push(...consentWarnings(sop, () => [...cliAllow, ...fileLlmAllowEntries()]));
  // a dry run that failed is a SOP that does not work as it is: the exit code says so
  const code = (report.statuses.failed ?? 0) + (report.statuses.interrupted ?? 0) > 0 ? 1 : 0;
  if (o.json) {
    process.stdout.write(JSON.stringify(report) + '\n');
    return code;
  }
  let asOf: string | undefined;
  try {
    asOf = (JSON.parse(readFileSync(join(packageRoot(), 'pricing.json'), 'utf8')) as { as_of?: string }).as_of;
  } catch {
    asOf = undefined;
  }
  // a price in the SOP (an llm block's "pricing", the only key of that name) comes first
  const sopPrices = JSON.stringify(sop).includes('"pricing":');
  process.stdout.write(formatCheck(report, { sop: sop.name, runs: o.runs, asOf, sopPrices, pricingFile: o.pricing }));
  return code;
}
