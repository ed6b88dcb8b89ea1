// One colour per agent, the same in every run: picked from a small palette by a hash of its name.
// Output is plain (no escape sequences) when it is not a terminal or NO_COLOR is set to anything.

const PALETTE = [36, 33, 35, 32, 34, 31, 96, 93, 95, 92, 94, 91];

/** The SGR colour code for an agent, stable by name. */
export function agentColour(name: string): number {
  let h = 2166136261;
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 16777619) >>> 0;
  return PALETTE[h % PALETTE.length]!;
}

/** Whether a stream gets colours: a terminal, and NO_COLOR unset or empty. */
export function colourWanted(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(stream.isTTY) && !env['NO_COLOR'];
}

export const paint = (code: number, s: string, on: boolean): string => (on ? `\x1b[${code}m${s}\x1b[0m` : s);
