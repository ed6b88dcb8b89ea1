// Commands and their results as a person reads them in the terminal: `▸ run_code python, 12 lines`
// instead of the command's JSON, and a result on one line. The run folder keeps them in full.

/** The command an agent's recorded reply holds (`{"command": ..., "command_args": {...}}`), or undefined. */
export function parseCommandMessage(content: string): { command: string; args: Record<string, unknown> } | undefined {
  const text = content.trim();
  if (!text.startsWith('{') || !text.includes('"command"')) return undefined;
  try {
    const v = JSON.parse(text) as unknown;
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return undefined;
    const { command, command_args: args } = v as { command?: unknown; command_args?: unknown };
    if (typeof command !== 'string') return undefined;
    return { command, args: typeof args === 'object' && args !== null && !Array.isArray(args) ? (args as Record<string, unknown>) : {} };
  } catch {
    return undefined;
  }
}

const SHORT = 40;

function oneLine(s: string, max: number): string {
  const flat = s.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** One argument value, briefly: short text as it is, longer text quoted and cut, text of several lines as a line count. */
function brief(value: unknown): string {
  if (typeof value === 'string') {
    const lines = value.trimEnd().split('\n').length;
    if (lines > 1) return `${lines} lines`;
    const t = value.trim();
    if (t.length <= 24 && !/[\s,"]/.test(t)) return t;
    return `"${oneLine(t, SHORT)}"`;
  }
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return `${value.length} item${value.length === 1 ? '' : 's'}`;
  if (value === null || value === undefined) return '';
  return '{…}';
}

/** `▸ NAME arg, arg, ...`: the command and a brief form of each argument, in order. */
export function describeCommand(cmd: { command: string; args: Record<string, unknown> }): string {
  const parts = Object.values(cmd.args)
    .map(brief)
    .filter((p) => p !== '');
  return `▸ ${cmd.command}${parts.length ? ` ${parts.join(', ')}` : ''}`;
}

/** A command's result on one line: its first line, cut, and how many lines follow. */
export function summariseResult(content: string, max = 100): string {
  const lines = content.split('\n').filter((l) => l.trim() !== '');
  if (lines.length === 0) return '(no output)';
  // "...Its result:" reads better with the line it announces.
  const head = lines[0]!.trimEnd().endsWith(':') && lines.length > 1 ? `${lines[0]} ${lines[1]}` : lines[0]!;
  const more = lines.length - (head === lines[0] ? 1 : 2);
  return `${oneLine(head, max)}${more > 0 ? ` (+${more} line${more === 1 ? '' : 's'})` : ''}`;
}
