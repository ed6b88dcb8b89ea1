// Lists in command arguments. Commands take strings, so a list is written one item per line
// ("a | b | c" fields), or as a JSON list; both are accepted and checked here.
import { EngineError } from '../../shared/errors.js';
import { TASK_VALUES, type TaskValue } from './taskboard/task.js';
import { isOneOf } from '../../shared/util/one-of.js';
import type { NewRoute } from './taskboard/routes.js';
import type { SubtaskSpec } from './taskboard/board.js';
import type { Triple } from './worldmodel/statement.js';

/** A problem with an argument the agent gave (told to the agent, who can correct it). */
export class ArgumentError extends EngineError {
  constructor(message: string) {
    super(message, 'ARGUMENT');
    this.name = 'ArgumentError';
  }
}

/** Lines of a list, without bullets or numbering ("- x", "* x", "1. x", "2) x"), blank lines skipped. */
export function listLines(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((l) =>
      l
        .trim()
        .replace(/^(?:[-*•]\s+|\d+[.)]\s+)/, '')
        .trim(),
    )
    .filter((l) => l !== '');
}

function jsonList(text: string, what: string): unknown[] | undefined {
  const t = text.trim();
  if (!t.startsWith('[')) return undefined;
  let v: unknown;
  try {
    v = JSON.parse(t);
  } catch (err) {
    throw new ArgumentError(`${what} looks like a JSON list but is not valid JSON (${(err as Error).message})`);
  }
  if (!Array.isArray(v)) throw new ArgumentError(`${what} must be a list`);
  return v as unknown[];
}

const fields = (line: string) => line.split('|').map((f) => f.trim());

/** Task ids: "3", "1, 2", "1 2", "#1, #2"; empty -> []. */
export function parseIds(text: string | undefined, what = 'ids'): number[] {
  if (text === undefined || text.trim() === '' || /^none$/i.test(text.trim())) return [];
  return text
    .split(/[,\s]+/)
    .filter((x) => x !== '')
    .map((x) => {
      const n = Number(x.replace(/^#/, ''));
      if (!Number.isInteger(n) || n < 1)
        throw new ArgumentError(`${what} must be task numbers separated by commas, e.g. "1, 2"; got "${x}"`);
      return n;
    });
}

function valueOf(v: unknown, where: string): TaskValue | undefined {
  if (v === undefined || v === '') return undefined;
  const s = String(v).toLowerCase();
  if (!isOneOf(TASK_VALUES, s)) throw new ArgumentError(`${where}: value must be ${TASK_VALUES.join(', ')}; got "${String(v)}"`);
  return s;
}

/** Subtasks: lines "name | description | value | after" (after: numbers of earlier lines, 1-based),
 * or a JSON list of {name, description, value, after}. */
export function parseSubtasks(text: string): SubtaskSpec[] {
  const json = jsonList(text, 'subtasks');
  const raw: Array<{ name?: unknown; description?: unknown; value?: unknown; after?: unknown }> = json
    ? json.map((x, i) => {
        if (!x || typeof x !== 'object') throw new ArgumentError(`subtask ${i + 1} must be an object {name, description, value, after}`);
        return x as Record<string, unknown>;
      })
    : listLines(text).map((line) => {
        const [name, description, value, after] = fields(line);
        return { name, description, value, after };
      });
  if (raw.length === 0) throw new ArgumentError('no subtasks given: write one per line, "name | description | value | after"');
  return raw.map((r, i) => {
    const where = `subtask ${i + 1}`;
    if (typeof r.name !== 'string' || !r.name.trim()) throw new ArgumentError(`${where} has no name`);
    const after = Array.isArray(r.after)
      ? r.after.map(Number)
      : parseIds(r.after === undefined ? undefined : String(r.after), `${where}: after`);
    return {
      name: r.name.trim(),
      description: typeof r.description === 'string' ? r.description.trim() : '',
      ...(valueOf(r.value, where) ? { value: valueOf(r.value, where) } : {}),
      after: after.map((n) => {
        if (!Number.isInteger(n) || n < 1 || n > i)
          throw new ArgumentError(`${where}: "after" must name earlier subtasks by their line number (1..${i}); got ${n}`);
        return n - 1;
      }),
    };
  });
}

/** Triples: lines "subject | predicate | object", or a JSON list of {subject, predicate, object}. */
export function parseTriples(text: string | undefined): Triple[] {
  if (text === undefined || text.trim() === '') return [];
  const json = jsonList(text, 'triples');
  const raw =
    json ??
    listLines(text).map((line) => {
      const f = fields(line);
      if (f.length !== 3) throw new ArgumentError(`triple "${line}" must be "subject | predicate | object"`);
      return { subject: f[0], predicate: f[1], object: f[2] };
    });
  return raw.map((t, i) => {
    const x = t as Record<string, unknown>;
    for (const k of ['subject', 'predicate', 'object']) {
      if (typeof x?.[k] !== 'string' || !x[k].trim()) throw new ArgumentError(`triple ${i + 1} needs a ${k}`);
    }
    return { subject: x.subject as string, predicate: x.predicate as string, object: x.object as string };
  });
}

/** Plain items: one per line, or a JSON list of strings. */
export function parseItems(text: string, what: string): string[] {
  const json = jsonList(text, what);
  const items = json
    ? json.map((x, i) => {
        if (typeof x !== 'string') throw new ArgumentError(`${what} item ${i + 1} must be text`);
        return x.trim();
      })
    : listLines(text);
  const kept = items.filter((x) => x !== '');
  if (kept.length === 0) throw new ArgumentError(`no ${what} given: write one per line`);
  return kept;
}

/** Routes: lines "score | description" (score 0..1), or a JSON list of {description, score}. */
export function parseRoutes(text: string): NewRoute[] {
  const json = jsonList(text, 'routes');
  const raw =
    json ??
    listLines(text).map((line) => {
      const bar = line.indexOf('|');
      if (bar < 0) throw new ArgumentError(`route "${line}" must be "score | description", e.g. "0.8 | simulate it"`);
      return { score: Number(line.slice(0, bar).trim()), description: line.slice(bar + 1).trim() };
    });
  if (raw.length === 0) throw new ArgumentError('no routes given: write one per line, "score | description"');
  return raw.map((r, i) => {
    const x = r as Record<string, unknown>;
    const score = typeof x.score === 'number' ? x.score : Number(x.score);
    if (!(score >= 0 && score <= 1)) throw new ArgumentError(`route ${i + 1} needs a score from 0 to 1`);
    if (typeof x.description !== 'string' || !x.description.trim()) throw new ArgumentError(`route ${i + 1} has no description`);
    return { score, description: x.description.trim() };
  });
}
