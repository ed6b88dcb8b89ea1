// Checking a cassette file against schemas/cassette.schema.json, for `sop validate` (cassettes
// ship next to the SOPs in examples/, so `sop validate examples/**/*.json` meets both kinds).
import type { ValidateFunction } from 'ajv';
import compiledValidator from './cassette-validator.generated.js';
import type { Diagnostic } from '../../format/sop/diagnostics.js';
import { pointerSegment } from '../../format/sop/json-source.js';
import { isObject } from '../../shared/util/is-object.js';

/** A cassette names its schema, or has interactions and none of a SOP's states. */
export function isCassetteDocument(doc: unknown): boolean {
  if (!isObject(doc)) return false;
  if (typeof doc.$schema === 'string' && /cassette\.schema\.json$/.test(doc.$schema)) return true;
  return Array.isArray(doc.interactions) && !('states' in doc);
}

// Generated at build time from schemas/cassette.schema.json (scripts/gen-schema.mjs).
function validator(): ValidateFunction {
  return compiledValidator;
}

/** Schema errors of a cassette, one per pointer and message. */
export function cassetteDiagnostics(doc: unknown): Diagnostic[] {
  const validate = validator();
  if (validate(doc)) return [];
  const out: Diagnostic[] = [];
  const seen = new Set<string>();
  for (const e of validate.errors ?? []) {
    const p = e.params as Record<string, unknown>;
    let pointer = e.instancePath;
    let message: string;
    if (e.keyword === 'additionalProperties') {
      pointer += `/${pointerSegment(String(p.additionalProperty))}`;
      message = `unknown key "${String(p.additionalProperty)}"`;
    } else if (e.keyword === 'required') {
      message = `missing required key "${String(p.missingProperty)}"`;
    } else if (e.keyword === 'enum') {
      message = `must be one of ${(p.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`;
    } else if (e.keyword === 'const') {
      message = `must be ${JSON.stringify(p.allowedValue)}`;
    } else {
      message = e.message ?? `fails ${e.keyword}`;
    }
    const key = `${pointer}\u0000${message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ severity: 'error', pointer, message: `cassette: ${message}` });
  }
  return out;
}
