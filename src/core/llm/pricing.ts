// Prices of models (USD per million input, cached-input and output tokens) and the cost of a call.
// The shipped table is pricing.json at the package root (checked against schemas/pricing.schema.json,
// by the ajv validator generated at build time by scripts/gen-schema.mjs);
// `--pricing FILE` replaces entries of it, and a SOP's `llm.pricing` sets the price of its model.
import { join } from 'node:path';
import { EngineError } from '../../shared/errors.js';
import { InputFileError, readInputFile } from '../../shared/io/read-input-file.js';
import { describeJsonProblem } from '../../shared/util/json-syntax.js';
import { packageRoot } from '../../shared/util/package-root.js';
import validatePricing from './pricing-validator.generated.js';
import type { PriceTier, Usage } from './types.js';

export type { PriceTier } from './types.js';

/** USD per million tokens. `cached_input` defaults to `input`; `batch_input` and `batch_output` to BATCH_DISCOUNT of input and output. */
export interface ModelPrice {
  input: number;
  cached_input?: number;
  output: number;
  batch_input?: number;
  batch_output?: number;
}

/** What a batch call costs of the standard price when the table gives no batch price (OpenAI's Batch API: half). */
export const BATCH_DISCOUNT = 0.5;

export type PricingTable = Record<string, ModelPrice>;

/** The models of a pricing file, or an EngineError naming the first thing wrong against schemas/pricing.schema.json. */
export function parsePricing(text: string, file: string): PricingTable {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    throw new EngineError(`pricing file ${file} is not JSON (${describeJsonProblem(text, e)})`, 'PRICING');
  }
  if (!validatePricing(data)) {
    const e = validatePricing.errors?.[0];
    const extra = e?.keyword === 'additionalProperties' ? ` ("${String(e.params.additionalProperty)}")` : '';
    const where = e?.instancePath ? `${e.instancePath} ` : '';
    throw new EngineError(
      `pricing file ${file}: ${where}${e?.message ?? 'is not a pricing table'}${extra} (USD per million tokens; see schemas/pricing.schema.json)`,
      'PRICING',
    );
  }
  return (data as { models: PricingTable }).models;
}

/** A pricing table is a few KiB: 1 MiB is plenty. */
export const MAX_PRICING_BYTES = 1024 * 1024;

function readPricing(file: string): PricingTable {
  let text: string;
  try {
    // files: a regular file under the cap; a device (/dev/zero) or a FIFO is refused before any read
    text = readInputFile(file, { maxBytes: MAX_PRICING_BYTES, what: 'a pricing file' });
  } catch (e) {
    if (!(e instanceof InputFileError)) throw e;
    throw new EngineError(`cannot read pricing file ${file}: ${e.reason}`, 'PRICING');
  }
  return parsePricing(text, file);
}

/** The shipped table, with the entries of `overrideFile` (--pricing) on top. */
export function loadPricing(overrideFile?: string): PricingTable {
  const shipped = readPricing(join(packageRoot(), 'pricing.json'));
  return overrideFile ? { ...shipped, ...readPricing(overrideFile) } : shipped;
}

/** The price of a model: its own entry, else the entry of its undated name ("gpt-4o-2024-08-06" -> "gpt-4o"). */
export function priceOf(table: PricingTable, model: string): ModelPrice | undefined {
  const own = Object.hasOwn(table, model) ? table[model] : undefined;
  if (own) return own;
  const undated = model.replace(/-\d{4}-\d{2}-\d{2}$/, '');
  return undated !== model && Object.hasOwn(table, undated) ? table[undated] : undefined;
}

/**
 * The price of a call to `model`: a SOP's `llm.pricing` for its own model (unless `--model`
 * replaced that model), else the table's; undefined for a model without a price.
 */
export function modelPrice(
  table: PricingTable,
  settings: { pricing?: ModelPrice; model?: string },
  override: string | undefined,
  model: string,
): ModelPrice | undefined {
  const own = settings.pricing && (!override || override === settings.model) ? settings.pricing : undefined;
  return own ?? priceOf(table, model);
}

/**
 * USD of one call; cached prompt tokens at the cached rate. Undefined when there is no price.
 * A batch call: its prompt and completion tokens at the batch prices, its cached prompt tokens at
 * BATCH_DISCOUNT of the cached rate (at most the batch input price).
 */
export function callCost(price: ModelPrice | undefined, u: Usage, tier?: PriceTier): number | undefined {
  if (!price) return undefined;
  const cached = Math.min(Math.max(0, u.cachedTokens ?? 0), u.promptTokens);
  let input = price.input;
  let cachedInput = price.cached_input ?? price.input;
  let output = price.output;
  if (tier === 'batch') {
    input = price.batch_input ?? price.input * BATCH_DISCOUNT;
    cachedInput = Math.min(cachedInput * BATCH_DISCOUNT, input);
    output = price.batch_output ?? price.output * BATCH_DISCOUNT;
  }
  const usd = ((u.promptTokens - cached) * input + cached * cachedInput + u.completionTokens * output) / 1e6;
  return Math.round(usd * 1e10) / 1e10;
}
