// The user's allow file, CONFIG/allow.json (CONFIG being $SOP_CONFIG_DIR, else
// $XDG_CONFIG_HOME/sop, else ~/.config/sop): what the user allows a SOP file to use, kept outside
// it. One reader for its sections: "mcp" (MCP servers that may start, src/features/mcp/allow.ts), "llm"
// (LLM servers a SOP names that may be sent calls, src/core/llm/consent.ts) and "plugins" (JavaScript
// modules a SOP names that may be loaded, src/api/plugins.ts). docs/tools.md.
import { homedir } from 'node:os';
import { join } from 'node:path';
import { EngineError } from '../../shared/errors.js';
import { InputFileError, readInputFile } from '../../shared/io/read-input-file.js';
import { JsonSyntaxError, parseJson } from '../../format/sop/json-source.js';

/** The folder of the user's sop settings. */
export function configDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.SOP_CONFIG_DIR) return env.SOP_CONFIG_DIR;
  return join(env.XDG_CONFIG_HOME || join(homedir(), '.config'), 'sop');
}

/** The user's allow file. */
export function allowFile(env: NodeJS.ProcessEnv = process.env): string {
  return join(configDir(env), 'allow.json');
}

export type AllowSection = 'mcp' | 'llm' | 'plugins';

export class AllowFileError extends EngineError {
  constructor(message: string) {
    super(message, 'ALLOW_FILE');
    this.name = 'AllowFileError';
  }
}

/**
 * The raw entries of one section of the allow file (none when there is no file, or no such
 * section); one clear line for a file that cannot be read or is not the right shape.
 */
function allowFileSection(section: AllowSection, file = allowFile()): unknown[] {
  let text: string;
  try {
    text = readInputFile(file, { what: 'an allow file', maxBytes: 1024 * 1024 });
  } catch (err) {
    if (err instanceof InputFileError && err.errno === 'ENOENT') return [];
    throw new AllowFileError((err as Error).message);
  }
  let data: unknown;
  try {
    data = parseJson(text);
  } catch (err) {
    // the line and column only: never the file's bytes
    const at = err instanceof JsonSyntaxError && err.position ? `:${err.position.line}:${err.position.column}` : '';
    throw new AllowFileError(`${file}${at}: not valid JSON`);
  }
  const shape = `must be an object like {"mcp": [{"name": ..., ...}], "llm": [{"base_url": ..., ...}]} (docs/tools.md)`;
  if (typeof data !== 'object' || data === null || Array.isArray(data)) throw new AllowFileError(`${file}: ${shape}`);
  for (const key of ['mcp', 'llm', 'plugins'] as const) {
    const list = (data as Record<string, unknown>)[key];
    if (list !== undefined && !Array.isArray(list))
      throw new AllowFileError(`${file}: "${key}" ${shape.replace(/^must be/, 'must be a list in')}`);
  }
  return ((data as Record<string, unknown>)[section] as unknown[] | undefined) ?? [];
}

/**
 * The entries of one section of the allow file (none when there is no file), each made by `entry`
 * from its raw value and where it stands (`FILE: section[i]`, for its messages); a file that
 * cannot be read or is not the right shape is told as the caller's own error (`error`).
 */
export function allowFileEntries<T>(
  section: AllowSection,
  file: string,
  error: (message: string) => EngineError,
  entry: (raw: unknown, where: string) => T,
): T[] {
  let list: unknown[];
  try {
    list = allowFileSection(section, file);
  } catch (err) {
    if (err instanceof AllowFileError) throw error(err.message);
    throw err;
  }
  return list.map((raw, i) => entry(raw, `${file}: ${section}[${i}]`));
}

/** An entry that is an object of the section's keys only; else `error` says it is not, or names the unknown key. */
export function entryObject(
  raw: unknown,
  where: string,
  keys: ReadonlySet<string>,
  error: (message: string) => EngineError,
): Record<string, unknown> {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw error(`${where} must be an object`);
  const r = raw as Record<string, unknown>;
  const extra = Object.keys(r).find((k) => !keys.has(k));
  if (extra !== undefined) throw error(`${where} has an unknown key "${extra.slice(0, 40)}" (keys: ${[...keys].join(', ')})`);
  return r;
}
