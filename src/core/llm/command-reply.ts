// The JSON command format (shared by command states and population actions): reading a command out of an agent's reply: {"command": NAME, "command_args": {...}} as JSON,
// alone, in a code fence, or with prose around it. Also accepted: "args"/"arguments" for the
// arguments, and {"command": {"name": ..., "args": ...}}. Raw line breaks inside JSON strings
// (a common slip when models write code) are repaired before giving up.
import { isObject } from '../../shared/util/is-object.js';

export type ParsedCommand = { ok: true; command: string; args: Record<string, unknown> } | { ok: false; error: string };

/** Top-level {...} spans of `text`, string-aware; an unclosed one runs to the end. */
export function jsonObjectSpans(text: string): string[] {
  const spans: string[] = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  let escaped = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (escaped) escaped = false;
      else if (c === '\\') escaped = true;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"' && depth > 0) inString = true;
    else if (c === '{') {
      if (depth === 0) start = i;
      depth++;
    } else if (c === '}' && depth > 0) {
      depth--;
      if (depth === 0) spans.push(text.slice(start, i + 1));
    }
  }
  if (depth > 0 && start >= 0) spans.push(text.slice(start));
  return spans;
}

/** Escape raw control characters inside JSON strings. */
export function repairJsonStrings(text: string): string {
  let out = '';
  let inString = false;
  let escaped = false;
  for (const c of text) {
    if (inString) {
      if (escaped) escaped = false;
      else if (c === '\\') escaped = true;
      else if (c === '"') inString = false;
      else if (c === '\n') {
        out += '\\n';
        continue;
      } else if (c === '\r') {
        out += '\\r';
        continue;
      } else if (c === '\t') {
        out += '\\t';
        continue;
      }
    } else if (c === '"') inString = true;
    out += c;
  }
  return out;
}

function tryParse(text: string): { value?: unknown; error?: string } {
  try {
    return { value: JSON.parse(text) };
  } catch (err) {
    try {
      return { value: JSON.parse(repairJsonStrings(text)) };
    } catch {
      return { error: (err as Error).message };
    }
  }
}

function candidates(reply: string): string[] {
  const out: string[] = [];
  const trimmed = reply.trim();
  if (trimmed.startsWith('{')) out.push(trimmed);
  for (const m of reply.matchAll(/```[A-Za-z0-9_-]*[ \t]*\r?\n?([\s\S]*?)```/g)) {
    const inner = m[1]!.trim();
    if (inner.startsWith('{')) out.push(inner);
    else out.push(...jsonObjectSpans(inner));
  }
  out.push(...jsonObjectSpans(reply));
  return [...new Set(out)];
}

function normalise(value: Record<string, unknown>): ParsedCommand {
  let command = value.command;
  let args: unknown = value.command_args ?? value.args ?? value.arguments;
  if (command && typeof command === 'object' && !Array.isArray(command)) {
    const inner = command as Record<string, unknown>;
    args ??= inner.args ?? inner.command_args ?? inner.arguments;
    command = inner.name;
  }
  if (typeof command !== 'string' || command.trim() === '') {
    return { ok: false, error: '"command" must be the name of a command (a string)' };
  }
  if (typeof args === 'string') {
    const parsed = tryParse(args);
    args = parsed.value;
  }
  if (args === undefined || args === null) args = {};
  if (!isObject(args)) {
    return { ok: false, error: '"command_args" must be a JSON object of named arguments' };
  }
  return { ok: true, command: command.trim(), args };
}

export function parseCommandReply(reply: string): ParsedCommand {
  const found: ParsedCommand[] = [];
  const seen = new Set<string>();
  let parseError: string | undefined;
  let objectWithoutCommand = false;
  for (const text of candidates(reply)) {
    const { value, error } = tryParse(text);
    if (error !== undefined) {
      parseError ??= error;
      continue;
    }
    if (!isObject(value)) continue;
    const obj = value;
    if (!('command' in obj)) {
      objectWithoutCommand = true;
      continue;
    }
    const cmd = normalise(obj);
    const key = JSON.stringify(cmd);
    if (seen.has(key)) continue;
    seen.add(key);
    found.push(cmd);
  }
  const good = found.filter((c) => c.ok);
  if (good.length > 1) {
    const names = good.map((c) => (c.ok ? c.command : '')).join(', ');
    return { ok: false, error: `the reply holds ${good.length} commands (${names}); give exactly one command per reply` };
  }
  if (good.length === 1) return good[0]!;
  if (found.length > 0) return found[0]!;
  if (objectWithoutCommand) return { ok: false, error: 'the JSON object has no "command" field' };
  if (parseError !== undefined) return { ok: false, error: `the JSON is malformed (${parseError})` };
  return { ok: false, error: 'no JSON object found in the reply' };
}
